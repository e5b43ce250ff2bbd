#include "agent/gpu/gpu_sampler.h"

#include <algorithm>
#include <chrono>

#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::agent {

GpuSampler::GpuSampler(std::unique_ptr<GpuBackend> backend, XidTable xids, Clock* clock,
                       int64_t interval_ms)
    : backend_(std::move(backend)),
      xids_(std::move(xids)),
      clock_(clock),
      interval_ms_(interval_ms) {}

GpuSampler::~GpuSampler() { Stop(); }

bool GpuSampler::SampleIfDue() {
  if (sampled_ && clock_->NowMs() - last_ms_ < interval_ms_) return false;
  SampleNow();
  return true;
}

void GpuSampler::SampleNow() {
  int64_t now = clock_->NowMs();
  last_ms_ = now;
  sampled_ = true;
  Result<std::vector<GpuSample>> samples = backend_->Sample();
  auto log = GetLogger("agent");
  std::unique_lock<std::mutex> lock(mu_);
  ++samples_;
  if (!samples.ok()) {
    ++failures_;
    if (!failing_)
      log->warn("GPU sample ({}) failed: {}", backend_->name(), ToStd(samples.status().message()));
    failing_ = true;
    return;
  }
  if (failing_) log->info("GPU sample ({}) works again", backend_->name());
  failing_ = false;
  for (const GpuSample& s : *samples) {
    auto it = std::find_if(states_.begin(), states_.end(),
                           [&](const GpuState& g) { return g.last.index == s.index; });
    if (it == states_.end()) {
      states_.emplace_back();
      it = states_.end() - 1;
    }
    for (const std::string& line : ApplyGpuSample(xids_, s, now, &*it)) {
      if (it->healthy) {
        log->info("{}", line);
      } else {
        log->warn("{}", line);
      }
    }
  }
  if (on_sample_) {
    std::vector<GpuState> states = states_;
    lock.unlock();
    on_sample_(std::move(states));
  }
}

bool GpuSampler::ClearHealth(int index) {
  std::lock_guard<std::mutex> lock(mu_);
  for (GpuState& g : states_) {
    if (g.last.index != index) continue;
    if (!g.healthy) {
      GetLogger("agent")->info("GPU {} ({}): unhealthy -> healthy: pre-flight passed", index,
                               g.last.uuid.empty() ? "no uuid" : g.last.uuid);
    }
    ClearGpuHealth(&g);
    return true;
  }
  return false;
}

std::vector<GpuState> GpuSampler::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return states_;
}

uint64_t GpuSampler::samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

uint64_t GpuSampler::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

void GpuSampler::Start() {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      SampleIfDue();
      int64_t wait_ms = std::max<int64_t>(1, last_ms_ + interval_ms_ - clock_->NowMs());
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return stop_; });
    }
  });
}

void GpuSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace longhaul::agent

#include "daemon/notify/notifier.h"

#include <chrono>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::notify {
namespace {

constexpr int kLogBurst = 5;
constexpr int64_t kLogWindowMs = 60'000;

}  // namespace

Notifier::Notifier(Deliverer* deliverer, Clock* clock, RetryPolicy policy, Recorder record,
                   metrics::CoordinatorMetrics* metrics)
    : deliverer_(deliverer),
      clock_(clock),
      policy_(policy),
      record_(std::move(record)),
      metrics_(metrics) {}

Notifier::~Notifier() { Stop(); }

void Notifier::Start() { thread_ = std::thread([this] { Run(); }); }

void Notifier::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Notifier::Enqueue(std::vector<store::NotificationRow> rows) {
  if (rows.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& row : rows) outbox_.Add(std::move(row));
  }
  cv_.notify_all();
}

std::optional<int64_t> Notifier::NextDueMs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outbox_.NextDueMs();
}

size_t Notifier::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outbox_.size();
}

int Notifier::DeliverDue() {
  std::vector<store::NotificationRow> due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    due = outbox_.TakeDue(clock_->NowMs());
  }
  for (store::NotificationRow& row : due) {
    Result<Sink> sink = ParseSink(row.sink);
    Status result = sink.ok() ? deliverer_->Deliver(*sink, row.kind, row.payload) : sink.status();
    Settle(&row, result, clock_->NowMs(), policy_);
    if (!sink.ok()) {  // nothing to retry: a sink that cannot be read never becomes one
      row.state = "failed";
      row.next_try_at_ms.reset();
    }
    if (metrics_ != nullptr) {
      metrics_->notifications.Add(row.kind, row.state == "pending" ? "retry" : row.state);
    }
    if (!result.ok()) LogFailure(row, sink.ok() ? SinkLabel(*sink) : row.sink);
    record_(row);
    if (row.state == "pending") {
      std::lock_guard<std::mutex> lock(mu_);
      outbox_.Add(row);
    }
  }
  return static_cast<int>(due.size());
}

void Notifier::LogFailure(const store::NotificationRow& row, const std::string& sink_label) {
  int64_t now = clock_->NowMs();
  LogWindow& w = log_windows_[sink_label];
  if (now - w.start_ms >= kLogWindowMs) {
    w.start_ms = now;
    w.lines = 0;
  }
  if (w.lines >= kLogBurst) {
    w.suppressed++;
    return;
  }
  w.lines++;
  std::string more =
      w.suppressed == 0 ? "" : StrCat(" (", w.suppressed, " failed tries to it not logged before)");
  w.suppressed = 0;
  std::string next = row.state == "pending"
                         ? StrCat("next try in ", FormatDurationMs(*row.next_try_at_ms - now))
                         : "giving up";
  auto log = GetLogger("notify");
  auto level = row.state == "failed" ? spdlog::level::err : spdlog::level::warn;
  log->log(level, "notification {} ({}, run {}) to {}: try {}/{} failed: {}; {}{}", row.id,
           row.kind, row.run_id.value_or(0), sink_label, row.tries, policy_.max_tries,
           row.last_error, next, more);
}

void Notifier::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::optional<int64_t> due = outbox_.NextDueMs();
    int64_t now = clock_->NowMs();
    if (due && *due <= now) {
      lock.unlock();
      DeliverDue();
      lock.lock();
      continue;
    }
    if (due) {
      cv_.wait_for(lock, std::chrono::milliseconds(*due - now));
    } else {
      cv_.wait(lock);
    }
  }
}

}  // namespace longhaul::notify

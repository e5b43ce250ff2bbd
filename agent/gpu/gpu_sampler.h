// Samples every GPU of a backend every --gpu-sample interval (docs/gpus.md): keeps the last
// sample and the health of each GPU (gpu_health.h), logs each change of health and each XID
// event, and renders them for /metrics (gpu_metrics.h).
//
// Time comes from the Clock: SampleIfDue() samples when the interval has passed, so tests
// drive it with a FakeClock. Start() runs it on a thread of its own, off the agent's event
// loop (an NVML call may take milliseconds); Snapshot() may be called from any thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/gpu/gpu_backend.h"
#include "agent/gpu/gpu_health.h"
#include "agent/gpu/xid_table.h"
#include "core/clock.h"

namespace longhaul::agent {

class GpuSampler {
 public:
  // `interval_ms` > 0.
  GpuSampler(std::unique_ptr<GpuBackend> backend, XidTable xids, Clock* clock, int64_t interval_ms);
  ~GpuSampler();  // Stop()s
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  // Samples when none was taken yet or `interval_ms` has passed since the last one; true
  // when it sampled.
  bool SampleIfDue();
  // Samples now. A backend error is logged (once until a sample succeeds again) and keeps
  // the previous states.
  void SampleNow();

  // Each GPU's state, by index order; empty before the first sample.
  std::vector<GpuState> Snapshot() const;
  // Called on the sampling thread after each successful sample with the states it left (the
  // agent forwards them to the coordinator). Set before Start().
  void set_on_sample(std::function<void(std::vector<GpuState>)> fn) { on_sample_ = std::move(fn); }
  // A pre-flight passed on GPU `index`: healthy again (ClearGpuHealth). False when no such GPU.
  bool ClearHealth(int index);
  const XidTable& xids() const { return xids_; }
  // Samples taken, and those whose backend call failed.
  uint64_t samples() const;
  uint64_t failures() const;
  const GpuBackend& backend() const { return *backend_; }
  int64_t interval_ms() const { return interval_ms_; }

  // A thread that calls SampleIfDue() and waits for the next one (real time) until Stop().
  void Start();
  void Stop();

 private:
  std::unique_ptr<GpuBackend> backend_;
  const XidTable xids_;
  Clock* const clock_;
  const int64_t interval_ms_;
  int64_t last_ms_ = 0;  // when the last sample was taken; only the sampling thread writes it
  bool sampled_ = false;
  bool failing_ = false;

  mutable std::mutex mu_;
  std::vector<GpuState> states_;  // guarded by mu_
  uint64_t samples_ = 0, failures_ = 0;
  std::function<void(std::vector<GpuState>)> on_sample_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace longhaul::agent

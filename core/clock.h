// Time for every component goes through Clock so that retry backoff, heartbeats, stall
// detection and timeouts are tested with FakeClock, never with sleeps.
//
// Times are milliseconds since the Unix epoch (int64); durations are milliseconds.
#pragma once

#include <atomic>
#include <cstdint>

namespace longhaul {

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall time in ms since the epoch. Thread-safe.
  virtual int64_t NowMs() const = 0;
};

class SystemClock : public Clock {
 public:
  int64_t NowMs() const override;
  // A process-wide instance; never destroyed.
  static SystemClock* Get();
};

// Moves only when told. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'700'000'000'000) : now_ms_(start_ms) {}
  int64_t NowMs() const override { return now_ms_.load(); }
  void AdvanceMs(int64_t ms) { now_ms_ += ms; }
  void SetMs(int64_t ms) { now_ms_ = ms; }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace longhaul

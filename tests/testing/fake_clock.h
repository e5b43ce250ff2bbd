// A Clock for tests: it moves only when told, so retry backoff, heartbeats, stall detection and
// timeouts are tested without sleeps. Test code only; production code takes a Clock
// (core/clock.h) and is handed this one by its tests.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/clock.h"

namespace longhaul::testing {

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

}  // namespace longhaul::testing

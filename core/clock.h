// Time for every component goes through Clock so that retry backoff, heartbeats, stall
// detection and timeouts are tested with a fake clock (tests/testing/fake_clock.h), never with
// sleeps.
//
// Times are milliseconds since the Unix epoch (int64); durations are milliseconds.
#pragma once

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

}  // namespace longhaul

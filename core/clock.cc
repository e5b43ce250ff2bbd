#include "core/clock.h"

#include <chrono>

namespace longhaul {

int64_t SystemClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

SystemClock* SystemClock::Get() {
  static auto* clock = new SystemClock();
  return clock;
}

}  // namespace longhaul

#include "stages/datagen/backoff.h"

#include <algorithm>
#include <charconv>

namespace longhaul::stages {

int64_t BackoffMs(const BackoffPolicy& p, int retry, std::string_view retry_after,
                  std::mt19937_64& rng) {
  int shift = std::clamp(retry - 1, 0, 40);
  int64_t cap = p.initial_ms;
  for (int i = 0; i < shift && cap < p.max_ms; ++i) cap *= 2;
  cap = std::min(cap, p.max_ms);
  int64_t half = cap / 2;
  int64_t delay = half;
  if (cap - half > 0) delay += std::uniform_int_distribution<int64_t>(0, cap - half)(rng);
  int64_t seconds = 0;
  auto [ptr, ec] =
      std::from_chars(retry_after.data(), retry_after.data() + retry_after.size(), seconds);
  if (ec == std::errc() && ptr == retry_after.data() + retry_after.size() && seconds > 0) {
    delay = std::max(delay, std::min<int64_t>(seconds, 600) * 1000);
  }
  return delay;
}

}  // namespace longhaul::stages

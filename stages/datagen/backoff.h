// Per-request retry delays: exponential backoff with jitter, and the server's Retry-After.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

namespace longhaul::stages {

struct BackoffPolicy {
  int64_t initial_ms = 1000;
  int64_t max_ms = 60'000;
};

// The delay before retry number `retry` (1 = the first retry): half of
// min(max, initial * 2^(retry-1)) fixed, the other half uniformly random ("equal jitter"),
// so that clients that failed together do not come back together, yet never retry at once.
// A Retry-After of N seconds (429/503) raises the delay to at least N s (capped at 10 min).
int64_t BackoffMs(const BackoffPolicy& p, int retry, std::string_view retry_after,
                  std::mt19937_64& rng);

}  // namespace longhaul::stages

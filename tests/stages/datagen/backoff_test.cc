#include "stages/datagen/backoff.h"

#include <gtest/gtest.h>

#include <set>

namespace longhaul::stages {
namespace {

TEST(BackoffTest, DoublesWithEqualJitterUpToTheCap) {
  BackoffPolicy p{1000, 8000};
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200; ++i) {
    int64_t d1 = BackoffMs(p, 1, "", rng);
    EXPECT_GE(d1, 500);
    EXPECT_LE(d1, 1000);
    int64_t d3 = BackoffMs(p, 3, "", rng);
    EXPECT_GE(d3, 2000);
    EXPECT_LE(d3, 4000);
    int64_t d9 = BackoffMs(p, 9, "", rng);
    EXPECT_GE(d9, 4000);
    EXPECT_LE(d9, 8000);
  }
}

TEST(BackoffTest, JitterSpreadsRetries) {
  BackoffPolicy p{1000, 60'000};
  std::mt19937_64 rng(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 50; ++i) seen.insert(BackoffMs(p, 2, "", rng));
  EXPECT_GT(seen.size(), 40u);
}

TEST(BackoffTest, RetryAfterRaisesTheDelay) {
  BackoffPolicy p{100, 1000};
  std::mt19937_64 rng(3);
  EXPECT_EQ(BackoffMs(p, 1, "7", rng), 7000);
  EXPECT_LE(BackoffMs(p, 1, "Wed, 21 Oct 2015 07:28:00 GMT", rng), 100);  // dates ignored
  EXPECT_EQ(BackoffMs(p, 1, "99999", rng), 600'000);
}

}  // namespace
}  // namespace longhaul::stages

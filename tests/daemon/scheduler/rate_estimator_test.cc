#include "daemon/scheduler/rate_estimator.h"

#include <gtest/gtest.h>

namespace longhaul::scheduler {
namespace {

TEST(RateEstimatorTest, SteadyProgressGivesItsRate) {
  RateEstimator r(30'000, 500);
  for (int i = 0; i <= 20; ++i) r.Observe(i * 5.0, i * 1'000);
  EXPECT_NEAR(r.rate(), 5.0, 1e-9);
  EXPECT_NEAR(*r.EtaSeconds(100, 200), 20.0, 1e-9);
}

TEST(RateEstimatorTest, BurstsAreMergedNotInfinite) {
  RateEstimator r(30'000, 500);
  r.Observe(0, 0);
  for (int i = 1; i <= 100; ++i) r.Observe(i, 1'000 + i);  // 100 lines within 0.1 s
  EXPECT_TRUE(r.has_rate());
  EXPECT_LT(r.rate(), 200);
}

TEST(RateEstimatorTest, FollowsAChangeOfPaceOverItsTimeConstant) {
  RateEstimator r(10'000, 500);
  double done = 0;
  int64_t t = 0;
  for (int i = 0; i < 60; ++i, t += 1'000) r.Observe(done += 10, t);
  EXPECT_NEAR(r.rate(), 10, 0.01);
  for (int i = 0; i < 60; ++i, t += 1'000) r.Observe(done += 1, t);  // slows to 1/s
  EXPECT_NEAR(r.rate(), 1, 0.05);
}

TEST(RateEstimatorTest, UnknownUntilTwoReportsAndAfterGoingBackwards) {
  RateEstimator r;
  EXPECT_FALSE(r.EtaSeconds(0, 10).has_value());
  r.Observe(10, 0);
  EXPECT_FALSE(r.has_rate());
  r.Observe(20, 10'000);
  EXPECT_TRUE(r.has_rate());
  r.Observe(5, 11'000);  // restarted from an earlier checkpoint
  EXPECT_FALSE(r.has_rate());
}

}  // namespace
}  // namespace longhaul::scheduler

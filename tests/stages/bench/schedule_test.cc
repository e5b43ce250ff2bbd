#include "stages/bench/schedule.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

ScheduleSpec Spec(double rate, std::optional<int64_t> count, std::optional<double> duration_s,
                  bool poisson = false, uint64_t seed = 0) {
  ScheduleSpec s;
  s.rate = rate;
  s.count = count;
  s.duration_s = duration_s;
  s.poisson = poisson;
  s.seed = seed;
  return s;
}

TEST(ScheduleTest, UniformGapsAreExactMultiples) {
  auto t = PlanSendTimes(Spec(3, 4, std::nullopt));
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[1], 333'333'333);
  EXPECT_EQ(t[3], 1'000'000'000);  // no accumulated rounding
}

TEST(ScheduleTest, DurationCutsTheSchedule) {
  auto t = PlanSendTimes(Spec(10, std::nullopt, 1.0));
  EXPECT_EQ(t.size(), 10u);  // 0, 0.1, ..., 0.9
  EXPECT_LT(t.back(), 1'000'000'000);
}

TEST(ScheduleTest, PoissonIsSeededAndHasTheRightMeanRate) {
  ScheduleSpec spec = Spec(1000, 20000, std::nullopt, /*poisson=*/true, /*seed=*/42);
  auto a = PlanSendTimes(spec);
  auto b = PlanSendTimes(spec);
  EXPECT_EQ(a, b);
  spec.seed = 43;
  EXPECT_NE(a, PlanSendTimes(spec));
  double mean_gap_ms = a.back() / 1e6 / (a.size() - 1);
  EXPECT_NEAR(mean_gap_ms, 1.0, 0.03);  // 20000 exponential draws: sd of the mean ~0.7 %
  for (size_t i = 1; i < a.size(); ++i) ASSERT_GE(a[i], a[i - 1]);
}

}  // namespace
}  // namespace longhaul::stages

#include "stages/bench/stats.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

TEST(StatsTest, PercentilesInterpolateLikeNumpy) {
  // numpy.percentile([1..10], [50, 90, 99]) = 5.5, 9.1, 9.91
  std::vector<double> v;
  for (int i = 10; i >= 1; --i) v.push_back(i);
  Summary s = Summarize(v);
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_NEAR(s.p99, 9.91, 1e-12);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
}

TEST(StatsTest, EmptyIsNull) {
  auto j = SummaryToJson(Summarize({}));
  EXPECT_EQ(j["count"], 0);
  EXPECT_TRUE(j["p50"].is_null());
}

TEST(StatsTest, WeightedSamplesCountByWeight) {
  // A 30 ms gap carrying 3 tokens is three 10 ms token gaps.
  Summary s = SummarizeWeighted({{10.0, 3.0}, {50.0, 1.0}});
  EXPECT_DOUBLE_EQ(s.mean, (30.0 + 50.0) / 4.0);
  EXPECT_DOUBLE_EQ(s.p50, 10.0);
  EXPECT_DOUBLE_EQ(s.p99, 50.0);
}

}  // namespace
}  // namespace longhaul::stages

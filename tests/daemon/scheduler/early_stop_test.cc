// The early-stopping rules (daemon/scheduler/early_stop.h) on synthetic curves: which item
// stops at which rung or step, and why.
#include "daemon/scheduler/early_stop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace longhaul::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

workflow::EarlyStopSpec Asha(std::vector<int64_t> rungs, int eta, bool maximize = false) {
  workflow::EarlyStopSpec spec;
  spec.sweep = "train";
  spec.metric = "loss";
  spec.rule = workflow::EarlyStopSpec::Rule::kAsha;
  spec.rungs = std::move(rungs);
  spec.eta = eta;
  spec.maximize = maximize;
  return spec;
}

workflow::EarlyStopSpec Median(int min_items, std::vector<int64_t> rungs = {}) {
  workflow::EarlyStopSpec spec;
  spec.sweep = "train";
  spec.metric = "loss";
  spec.rule = workflow::EarlyStopSpec::Rule::kMedian;
  spec.min_items = min_items;
  spec.rungs = std::move(rungs);
  return spec;
}

struct Report {
  std::string item;
  int64_t step;
  double value;
};

// Feeds the reports in order; returns item -> the step it was stopped at.
std::map<std::string, int64_t> Feed(SweepJudge& judge, const std::vector<Report>& reports,
                                    std::map<std::string, std::string>* reasons = nullptr) {
  std::map<std::string, int64_t> stopped;
  for (const Report& r : reports) {
    if (stopped.count(r.item)) continue;  // a stopped item reports no more
    if (auto v = judge.Observe(r.item, r.step, r.value)) {
      EXPECT_EQ(v->item, r.item);
      stopped[r.item] = v->step;
      if (reasons) (*reasons)[r.item] = v->reason;
    }
  }
  return stopped;
}

// Steps 1..4 of each item, round by round: in each round the items report in the given order.
std::vector<Report> Rounds(const std::vector<std::pair<std::string, std::vector<double>>>& curves) {
  std::vector<Report> out;
  for (size_t step = 1; step <= curves[0].second.size(); ++step) {
    for (const auto& [item, values] : curves)
      out.push_back({item, int64_t(step), values[step - 1]});
  }
  return out;
}

TEST(AshaTest, TheFirstAtARungGoesOnAndEachLaterOneMustBeInTheTopOneOverEta) {
  SweepJudge judge(Asha({1, 2}, 2));
  // Rung 1 in arrival order: a 0.9 (1 of 1: keep 1), b 0.8 (best of 2), c 1.5 (3rd of 3, keep
  // 2: stops), d 0.95 (3rd of 4, keep 2: stops), e 0.5 (best of 5).
  std::map<std::string, std::string> why;
  std::map<std::string, int64_t> stopped = Feed(judge,
                                                Rounds({{"a", {0.9, 0.7}},
                                                        {"b", {0.8, 0.75}},
                                                        {"c", {1.5, 0.1}},
                                                        {"d", {0.95, 0.1}},
                                                        {"e", {0.5, 0.74}}}),
                                                &why);
  // Rung 2: a 0.7 (1 of 1), b 0.75 (2nd of 2, keep 1: stops), e 0.74 (2nd of 3, keep 2).
  EXPECT_THAT(stopped, ElementsAre(Pair("b", 2), Pair("c", 1), Pair("d", 1)));
  EXPECT_EQ(why["c"],
            "rung 1 (step 1): loss 1.5 is not among the best 2 of 3 items there (eta 2); beaten "
            "by b (0.8), a (0.9)");
  EXPECT_EQ(why["b"],
            "rung 2 (step 2): loss 0.75 is not among the best 1 of 2 items there (eta 2); beaten "
            "by a (0.7)");
  EXPECT_TRUE(judge.Stopped("d"));
  EXPECT_FALSE(judge.Stopped("e"));
}

TEST(AshaTest, MaxModeAndEtaThreeKeepTheBestThird) {
  SweepJudge judge(Asha({2}, 3, /*maximize=*/true));
  // Only step 2 is a rung. Arrivals: a 0.5 (1/1), b 0.4 (2nd of 2, keep 1: stop), c 0.6 (1st),
  // d 0.55 (2nd of 4, keep 2), e 0.3 (5th of 5, keep 2: stop), f 0.58 (2nd of 6, keep 2).
  std::map<std::string, int64_t> stopped = Feed(judge, {{"a", 1, 0.1},
                                                        {"a", 2, 0.5},
                                                        {"b", 2, 0.4},
                                                        {"c", 2, 0.6},
                                                        {"d", 2, 0.55},
                                                        {"e", 2, 0.3},
                                                        {"f", 2, 0.58}});
  EXPECT_THAT(stopped, ElementsAre(Pair("b", 2), Pair("e", 2)));
}

TEST(AshaTest, AReportPastSeveralRungsIsJudgedAtEachAndOnlyOnce) {
  SweepJudge judge(Asha({1, 2, 4}, 2));
  EXPECT_FALSE(judge.Observe("a", 1, 1.0));
  EXPECT_FALSE(judge.Observe("a", 4, 0.5));  // rungs 2 and 4 at once: first at both
  EXPECT_FALSE(judge.Observe("b", 1, 0.9));  // best of 2 at rung 1
  // b jumps to step 5 with 0.6: rung 2, 2nd of 2 (a 0.5), keep 1: stops at rung 2, not 4.
  std::optional<EarlyStopVerdict> v = judge.Observe("b", 5, 0.6);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->step, 2);
  // A report again at a rung already judged (a retry that resumed) changes nothing.
  EXPECT_FALSE(judge.Observe("a", 1, 99));
  EXPECT_FALSE(judge.Observe("b", 6, 0.1));  // stopped: judged no more
}

TEST(AshaTest, TiesCountInTheItemsFavour) {
  SweepJudge judge(Asha({1}, 2));
  EXPECT_FALSE(judge.Observe("a", 1, 1.0));
  EXPECT_FALSE(judge.Observe("b", 1, 1.0));  // 2 of 2, keep 1, but nobody is better
  EXPECT_TRUE(judge.Observe("c", 1, 1.1));
}

TEST(AshaTest, ARestartThatReplaysTheSameValuesGivesTheSameVerdicts) {
  std::vector<Report> reports = Rounds({{"a", {3, 2, 1, 0.5}},
                                        {"b", {2, 1.5, 1.4, 1.3}},
                                        {"c", {4, 3, 2, 1}},
                                        {"d", {1, 2, 3, 4}},
                                        {"e", {2.5, 1, 0.9, 0.8}},
                                        {"f", {5, 5, 5, 5}}});
  SweepJudge first(Asha({1, 2, 4}, 2));
  SweepJudge second(Asha({1, 2, 4}, 2));
  std::map<std::string, int64_t> once = Feed(first, reports);
  // Rung 1: c (3rd of 3) and f (6th of 6) stop; rung 2: all four go on; rung 4: a first, b
  // (2nd of 2, keep 1) and d (3rd of 3, keep 2) stop.
  EXPECT_THAT(once, ElementsAre(Pair("b", 4), Pair("c", 1), Pair("d", 4), Pair("f", 1)));
  EXPECT_EQ(Feed(second, reports), once);
}

TEST(MedianTest, StopsAnItemWhoseBestIsWorseThanTheOthersMedianAtThatStep) {
  SweepJudge judge(Median(3));
  std::map<std::string, std::string> why;
  // Round by round in order a, b, c, d. Step 1: a and b come before 3 items reached it; c:
  // others 1.0, 0.9, median 0.95, c's 2.0 is worse: stops. d: others a 1.0, b 0.9, c 2.0 (a
  // stopped item still counts), median 1.0; d's 0.95 is better. Step 2: a and b again come
  // before 3 items (c never reached step 2); d 0.85: others a 0.8, b 0.7, median 0.75: stops.
  std::map<std::string, int64_t> stopped = Feed(
      judge, Rounds({{"a", {1.0, 0.8}}, {"b", {0.9, 0.7}}, {"c", {2.0, 0.1}}, {"d", {0.95, 0.85}}}),
      &why);
  EXPECT_THAT(stopped, ElementsAre(Pair("c", 1), Pair("d", 2)));
  EXPECT_EQ(why["c"],
            "step 1: best loss so far 2 is worse than the median 0.95 of the other 2 items at "
            "that step; beaten by b (0.9), a (1)");
  EXPECT_EQ(why["d"],
            "step 2: best loss so far 0.85 is worse than the median 0.75 of the other 2 items at "
            "that step; beaten by b (0.7), a (0.8)");
}

TEST(MedianTest, TheBestSoFarCountsNotTheLatest) {
  SweepJudge judge(Median(2));
  EXPECT_FALSE(judge.Observe("a", 1, 1.0));
  EXPECT_FALSE(judge.Observe("a", 2, 0.6));
  EXPECT_FALSE(judge.Observe("b", 1, 0.5));  // better than a's 1.0 at step 1
  // b's step 2 is 0.7, worse than a's 0.6, but its best so far (0.5) is better: goes on.
  EXPECT_FALSE(judge.Observe("b", 2, 0.7));
  EXPECT_TRUE(judge.Observe("c", 1, 1.2));  // others at step 1: a 1.0, b 0.5
}

TEST(MedianTest, WithRungsOnlyThoseStepsAreJudged) {
  SweepJudge judge(Median(2, {3}));
  EXPECT_FALSE(judge.Observe("a", 1, 1.0));
  EXPECT_FALSE(judge.Observe("b", 1, 5.0));  // step 1 is not a rung
  EXPECT_FALSE(judge.Observe("a", 3, 0.5));
  std::optional<EarlyStopVerdict> v = judge.Observe("b", 4, 0.9);  // past rung 3: judged there
  ASSERT_TRUE(v);
  EXPECT_EQ(v->step, 3);
  EXPECT_THAT(v->reason, HasSubstr("median 0.5 of the other 1 item at that step"));
}

}  // namespace
}  // namespace longhaul::scheduler

// A sweep submitted again with only its early_stop rule changed (docs/sweeps.md, "Changing the
// rule"): the new rule judges the earlier run's stored values at submission. Run 1 is four
// synthetic trainers with known losses at step 1 (a 1.0, b 2.0, c 0.5, d 1.5, arriving in that
// order; a and c report 0.8 and 0.4 at step 2 and finish) under asha with rung 1, eta 2: b and d
// stop there. The tests assert which items each new rule stops, keeps, reuses and runs.
#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

std::string RejudgeSweep(const std::string& rule) {
  return StrCat(R"(
name: sweep
stages:
  train:
    foreach: [a, b, c, d]
    early_stop: )",
                rule, R"(
    run: [train, "${item}"]
  eval:
    foreach: [a, b, c, d]
    needs: [train]
    run: [eval, "${item}"]
  report:
    needs: [train]
    run: [report]
)");
}

constexpr char kRule1[] = "{metric: loss, rule: asha, rungs: [1], eta: 2}";

class SweepRejudgeTest : public SchedulerTest {
 protected:
  // Run 1 as the file comment says, to its end.
  int64_t RunFirst() {
    n1_ = Connect("n1", /*cpus=*/8);
    int64_t run = Submit(RejudgeSweep(kRule1));
    std::map<std::string, int64_t> ids = TakeStartedIds();
    for (const auto& [stage, id] : ids) Started(n1_, id);
    Events(n1_, ids["train-a"], {MetricAtStep("loss", 1, 1.0)});
    Events(n1_, ids["train-b"], {MetricAtStep("loss", 1, 2.0)});
    Events(n1_, ids["train-c"], {MetricAtStep("loss", 1, 0.5)});
    Events(n1_, ids["train-d"], {MetricAtStep("loss", 1, 1.5)});
    Events(n1_, ids["train-a"], {MetricAtStep("loss", 2, 0.8)}, 2);
    Events(n1_, ids["train-c"], {MetricAtStep("loss", 2, 0.4)}, 2);
    Exit(n1_, ids["train-b"], 0, 15);
    Exit(n1_, ids["train-d"], 0, 15);
    Exit(n1_, ids["train-a"], 0);
    Exit(n1_, ids["train-c"], 0);
    for (const auto& [stage, id] : TakeStartedIds()) Exit(n1_, id, 0);
    EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
    EXPECT_EQ(GetStage(run, "train-b").status(), v1::STAGE_STOPPED_EARLY);
    EXPECT_EQ(GetStage(run, "train-d").status(), v1::STAGE_STOPPED_EARLY);
    return run;
  }

  uint64_t n1_ = 0;
};

TEST_F(SweepRejudgeTest, FlippingTheDirectionStopsAFinishedItemAndResumesTwoStoppedOnes) {
  RunFirst();
  // mode: max, in the stored order: a 1 kept (1st); b 2 kept (best of 2); c 0.5 is 3rd of 3
  // with 2 kept: stopped; d 1.5 is 2nd of 4 with 2 kept: kept.
  int64_t run = Submit(RejudgeSweep("{metric: loss, mode: max, rule: asha, rungs: [1], eta: 2}"));
  std::map<std::string, int64_t> started = TakeStartedIds();

  v1::Stage a = GetStage(run, "train-a");
  EXPECT_EQ(a.status(), v1::STAGE_CACHED);
  EXPECT_EQ(a.plan_reason(),
            "kept by the new rule: loss 1 at rung 1 (step 1) is among the best 1 of 1 (eta 2); "
            "same inputs as run 1");
  v1::Stage c = GetStage(run, "train-c");
  EXPECT_EQ(c.status(), v1::STAGE_STOPPED_EARLY);
  EXPECT_EQ(c.plan_action(), "stop");
  EXPECT_EQ(c.reason(),
            "stopped by the new rule at rung 1 (step 1): loss 0.5 is not among the best 2 of 3 "
            "items there (eta 2); beaten by train-b (2), train-a (1)");
  for (const char* name : {"train-b", "train-d"}) {
    v1::Stage s = GetStage(run, name);
    EXPECT_EQ(s.plan_action(), "run") << name;
    EXPECT_TRUE(started.count(name)) << name;
  }
  EXPECT_EQ(GetStage(run, "train-b").plan_reason(),
            "kept by the new rule: loss 2 at rung 1 (step 1) is among the best 1 of 2 (eta 2); "
            "stopped early in run 1 by the earlier rule");
  EXPECT_EQ(GetStage(run, "train-d").plan_reason(),
            "kept by the new rule: loss 1.5 at rung 1 (step 1) is among the best 2 of 4 (eta 2); "
            "stopped early in run 1 by the earlier rule");
  // eval-c was reused in a plan without the rule; it needs only the stopped item: skipped.
  v1::Stage eval_c = GetStage(run, "eval-c");
  EXPECT_EQ(eval_c.plan_reason(), "needs 'train-c', which the new rule stops");
  EXPECT_EQ(eval_c.status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(GetStage(run, "eval-a").status(), v1::STAGE_CACHED);
  // The report was made without b and d, which run now.
  EXPECT_EQ(GetStage(run, "report").plan_reason(), "upstream 'train-b' runs again");
  // Exactly the two kept items start; nothing else changed.
  EXPECT_EQ(started.size(), 2u);

  // b and d report their step-1 values again: the rung was judged on their stored values, so
  // it is not judged again, and nothing is stopped.
  Started(n1_, started["train-b"]);
  Started(n1_, started["train-d"]);
  Events(n1_, started["train-b"], {MetricAtStep("loss", 1, 2.0)});
  Events(n1_, started["train-d"], {MetricAtStep("loss", 1, 1.5)});
  EXPECT_TRUE(TakeCancels().empty());
  Exit(n1_, started["train-b"], 0);
  Exit(n1_, started["train-d"], 0);
  std::map<std::string, int64_t> next = TakeStartedIds();
  EXPECT_EQ(next.size(), 3u);  // eval-b, eval-d and the report
  ASSERT_TRUE(next.count("eval-b") && next.count("eval-d") && next.count("report"));
  for (const auto& [stage, id] : next) Exit(n1_, id, 0);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
}

TEST_F(SweepRejudgeTest, AStricterEtaStopsOnlyFromTheStoredValuesAndRunsNothing) {
  RunFirst();
  // eta 4: a 1 kept (1st); b 2 2nd of 2, 1 kept: stopped; c 0.5 best of 3: kept; d 1.5 3rd of
  // 4, 1 kept: stopped. The same two stop, now with the new rule's reasons, and nothing runs.
  int64_t run = Submit(RejudgeSweep("{metric: loss, rule: asha, rungs: [1], eta: 4}"));
  EXPECT_TRUE(TakeStartedIds().empty());
  EXPECT_EQ(GetStage(run, "train-a").status(), v1::STAGE_CACHED);
  EXPECT_EQ(GetStage(run, "train-c").status(), v1::STAGE_CACHED);
  v1::Stage b = GetStage(run, "train-b");
  EXPECT_EQ(b.status(), v1::STAGE_STOPPED_EARLY);
  EXPECT_EQ(b.reason(),
            "stopped by the new rule at rung 1 (step 1): loss 2 is not among the best 1 of 2 "
            "items there (eta 4); beaten by train-a (1)");
  EXPECT_EQ(GetStage(run, "train-d").status(), v1::STAGE_STOPPED_EARLY);
  EXPECT_EQ(GetStage(run, "eval-b").status(), v1::STAGE_SKIPPED);
  // The report was made with a and c only, as it would be now: nothing it needs changed state.
  EXPECT_EQ(GetStage(run, "report").status(), v1::STAGE_CACHED);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
}

TEST_F(SweepRejudgeTest, AMedianRuleAtStepTwoJudgesOnlyWhatReachedIt) {
  RunFirst();
  // median at step 2, 2 items: a reached it first, alone (not judged, and a step is judged
  // once); c then, best 0.4 against a's 0.8: kept. b and d have no value at step 2: not judged,
  // so they run, and the report over the sweep with them. Nothing is stopped.
  int64_t run = Submit(RejudgeSweep("{metric: loss, rule: median, rungs: [2], min_items: 2}"));
  std::map<std::string, int64_t> started = TakeStartedIds();
  EXPECT_EQ(started.size(), 2u);
  EXPECT_TRUE(started.count("train-b") && started.count("train-d"));
  EXPECT_EQ(GetStage(run, "train-a").plan_reason(),
            "kept by the new rule (not judged on the stored values); same inputs as run 1");
  EXPECT_EQ(GetStage(run, "train-c").plan_reason(),
            "kept by the new rule: best loss 0.4 at step 2 is not worse than the median 0.8 of "
            "the other 1 item; same inputs as run 1");
  EXPECT_EQ(GetStage(run, "train-b").plan_reason(),
            "kept by the new rule (not judged on the stored values); stopped early in run 1 by "
            "the earlier rule");
  EXPECT_EQ(GetStage(run, "report").plan_reason(), "upstream 'train-b' runs again");
}

TEST_F(SweepRejudgeTest, TheSameRuleJudgesNothingAgain) {
  RunFirst();
  int64_t run = Submit(RejudgeSweep(kRule1));
  std::map<std::string, int64_t> started = TakeStartedIds();
  // As before this change: the stopped items run again from their start.
  EXPECT_EQ(started.size(), 2u);
  EXPECT_EQ(GetStage(run, "train-b").plan_reason(), "run 1 did not finish it");
  EXPECT_EQ(GetStage(run, "train-a").plan_reason(), "same inputs as run 1");
}

TEST_F(SweepRejudgeTest, AfterARestartAResumedItemStillTakesItsStoredValues) {
  RunFirst();
  int64_t run = Submit(RejudgeSweep("{metric: loss, mode: max, rule: asha, rungs: [1], eta: 2}"));
  std::map<std::string, int64_t> started = TakeStartedIds();
  ASSERT_TRUE(started.count("train-b"));
  Started(n1_, started["train-b"]);
  NewScheduler();
  v1::OwnedAttempt o;
  o.set_attempt_id(started["train-b"]);
  o.set_running(true);
  n1_ = Connect("n1", 8, 0, {o});
  TakeAll();
  Events(n1_, started["train-b"], {MetricAtStep("loss", 1, 2.0)});
  EXPECT_TRUE(TakeCancels().empty());
  EXPECT_EQ(GetStage(run, "train-b").status(), v1::STAGE_RUNNING);
}

}  // namespace
}  // namespace longhaul::scheduler

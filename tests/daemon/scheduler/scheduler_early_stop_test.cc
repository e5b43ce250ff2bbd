// Early stopping in a sweep, on the scheduler driven by hand (docs/sweeps.md, "Early
// stopping"): items running at once, their metric values arriving in an order the test
// chooses; a loser's attempt is cancelled, it ends stopped_early when it exits, its own
// dependent is skipped, the stage over the sweep runs with the rest, and the run succeeds.
#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kSweepAsha[] = R"(
name: sweep
stages:
  train:
    foreach: [a, b, c, d]
    early_stop: {metric: loss, rule: asha, rungs: [1], eta: 2}
    run: [train, "${item}"]
  eval:
    foreach: [a, b, c, d]
    needs: [train]
    run: [eval, "${item}"]
  report:
    needs: [train]
    run: [report]
)";

class EarlyStopSchedulerTest : public SchedulerTest {};

TEST_F(EarlyStopSchedulerTest, ALoserIsCancelledEndsStoppedEarlyAndOnlyItsOwnDependentIsSkipped) {
  uint64_t n1 = Connect("n1", /*cpus=*/4);
  int64_t run = Submit(kSweepAsha);
  std::map<std::string, int64_t> ids = TakeStartedIds();
  ASSERT_EQ(ids.size(), 4u);
  for (const auto& [stage, id] : ids) Started(n1, id);

  Events(n1, ids["train-a"], {MetricAtStep("loss", 1, 1.0)});
  Events(n1, ids["train-b"], {MetricAtStep("loss", 1, 2.0)});  // 2nd of 2, best 1 kept
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), ids["train-b"]);
  EXPECT_EQ(cancels[0].reason(), "stopped_early");
  EXPECT_EQ(cancels[0].grace_ms(), 10'000);  // as a cancel: SIGTERM, then the stage's grace
  // Until its attempt has ended it still runs.
  EXPECT_EQ(GetStage(run, "train-b").status(), v1::STAGE_RUNNING);
  Events(n1, ids["train-c"], {MetricAtStep("loss", 1, 0.5)});  // best of 3
  Events(n1, ids["train-d"],
         {MetricAtStep("loss", 1, 1.5)});  // 3rd of 4 (b's 2.0 still counts), best 2
  cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), ids["train-d"]);
  // A value after the verdict, as the process dies, changes nothing.
  Events(n1, ids["train-b"], {MetricAtStep("loss", 2, 0.1)}, 2);
  EXPECT_TRUE(TakeCancels().empty());

  Exit(n1, ids["train-b"], 0, /*signal=*/15);
  v1::Stage b = GetStage(run, "train-b");
  EXPECT_EQ(b.status(), v1::STAGE_STOPPED_EARLY);
  EXPECT_EQ(b.reason(),
            "rung 1 (step 1): loss 2 is not among the best 1 of 2 items there (eta 2); beaten by "
            "train-a (1)");
  v1::Stage eval_b = GetStage(run, "eval-b");
  EXPECT_EQ(eval_b.status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(eval_b.reason(), StrCat("needs 'train-b', which stopped early: ", b.reason()));
  EXPECT_EQ(GetStage(run, "report").status(), v1::STAGE_WAITING);

  Exit(n1, ids["train-d"], 0, /*signal=*/15);
  Exit(n1, ids["train-a"], 0);
  Exit(n1, ids["train-c"], 0);
  EXPECT_EQ(GetStage(run, "train-d").status(), v1::STAGE_STOPPED_EARLY);
  EXPECT_EQ(GetStage(run, "eval-d").status(), v1::STAGE_SKIPPED);
  // The evaluations of the two that finished and the report over the sweep start.
  std::map<std::string, int64_t> next = TakeStartedIds();
  EXPECT_EQ(next.size(), 3u);
  ASSERT_TRUE(next.count("eval-a") && next.count("eval-c") && next.count("report"));
  for (const auto& [stage, id] : next) Exit(n1, id, 0);
  v1::Run done = GetRun(run);
  EXPECT_EQ(done.status(), v1::RUN_SUCCEEDED) << done.reason();
}

TEST_F(EarlyStopSchedulerTest, AfterARestartTheJudgeIsRebuiltFromTheStoredValues) {
  uint64_t n1 = Connect("n1", /*cpus=*/4);
  int64_t run = Submit(kSweepAsha);
  std::map<std::string, int64_t> ids = TakeStartedIds();
  for (const auto& [stage, id] : ids) Started(n1, id);
  Events(n1, ids["train-a"], {MetricAtStep("loss", 1, 1.0)});
  Events(n1, ids["train-c"], {MetricAtStep("loss", 1, 0.5)});

  NewScheduler();  // a coordinator restart: the judge is gone from memory
  std::vector<v1::OwnedAttempt> owned;
  for (const auto& [stage, id] : ids) {
    v1::OwnedAttempt o;
    o.set_attempt_id(id);
    o.set_running(true);
    owned.push_back(o);
  }
  n1 = Connect("n1", 4, 0, owned);
  TakeAll();
  // b at rung 1 is judged against a and c, stored before the restart: 3rd of 3, best 2 kept.
  Events(n1, ids["train-b"], {MetricAtStep("loss", 1, 2.0)});
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), ids["train-b"]);
  Exit(n1, ids["train-b"], 0, 15);
  EXPECT_EQ(GetStage(run, "train-b").reason(),
            "rung 1 (step 1): loss 2 is not among the best 2 of 3 items there (eta 2); beaten by "
            "train-c (0.5), train-a (1)");
}

TEST_F(EarlyStopSchedulerTest, AFailedItemStillFailsTheRun) {
  uint64_t n1 = Connect("n1", /*cpus=*/4);
  int64_t run = Submit(kSweepAsha);
  std::map<std::string, int64_t> ids = TakeStartedIds();
  for (const auto& [stage, id] : ids) Started(n1, id);
  Events(n1, ids["train-a"], {MetricAtStep("loss", 1, 1.0)});
  Events(n1, ids["train-b"], {MetricAtStep("loss", 1, 2.0)});
  Exit(n1, ids["train-b"], 0, 15);
  Exit(n1, ids["train-a"], 3);  // failed: its evaluation is skipped, and that is a failure
  Exit(n1, ids["train-c"], 0);
  Exit(n1, ids["train-d"], 0);
  for (const auto& [stage, id] : TakeStartedIds()) Exit(n1, id, 0);
  v1::Run done = GetRun(run);
  EXPECT_EQ(GetStage(run, "train-b").status(), v1::STAGE_STOPPED_EARLY);
  EXPECT_EQ(GetStage(run, "eval-a").status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(done.status(), v1::RUN_FAILED);
  EXPECT_EQ(done.reason(), "train-a failed");
}

}  // namespace
}  // namespace longhaul::scheduler

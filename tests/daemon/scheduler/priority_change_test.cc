// Changing a run's priority class after submission (docs/scheduling.md, "Changing a run's
// class"), on a scheduler driven by hand: the run's waiting stages move in the queue at once,
// its running attempt is not touched, the class is stored, and the attempts carry it to the
// agent (StartAttempt.priority, for the Slurm executor's --qos and --partition).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

// Not preemptible: what these tests watch is the queue's order, not a higher class taking a
// running attempt's GPU (preemption_test).
std::string OneGpuRun(const std::string& name, int stages = 1) {
  std::string yaml = StrCat("name: ", name, "\ndefaults: {preemptible: false}\nstages:\n");
  for (int i = 0; i < stages; ++i) {
    yaml += StrCat("  s", i, ": {run: [prog], resources: {gpus: 1}}\n");
  }
  return yaml;
}

TEST_F(SchedulerTest, AChangedClassMovesTheWaitingStagesAndLeavesTheRunningAttempt) {
  uint64_t agent = Connect("one", 8, 1);
  int64_t blocker = Submit(OneGpuRun("blocker"));
  std::vector<v1::StartAttempt> running = TakeStarts();
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].priority(), "normal") << "the class goes with the attempt";
  int64_t older = Submit(OneGpuRun("older"));
  int64_t younger = Submit(OneGpuRun("younger", 2));
  EXPECT_TRUE(TakeStarts().empty()) << "the one GPU is busy";

  Result<v1::Run> changed;
  Batch([&] { changed = scheduler_->SetRunPriority(younger, "high"); });
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed->priority(), "high");
  // The blocker, now low, keeps its GPU: a class change itself stops no attempt.
  Batch([&] { ASSERT_TRUE(scheduler_->SetRunPriority(blocker, "low").ok()); });
  EXPECT_TRUE(TakeCancels().empty());
  EXPECT_EQ(GetStage(blocker, "s0").status(), v1::STAGE_RUNNING);

  // The GPU frees: the younger run, now high, takes it before the older normal one.
  Exit(agent, running[0].attempt_id(), 0);
  std::vector<v1::StartAttempt> next = TakeStarts();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].run_id(), younger);
  EXPECT_EQ(next[0].priority(), "high");
  EXPECT_EQ(GetStage(older, "s0").status(), v1::STAGE_READY);

  // Back to low: its second stage now waits behind the older normal run.
  Batch([&] { ASSERT_TRUE(scheduler_->SetRunPriority(younger, "low").ok()); });
  Exit(agent, next[0].attempt_id(), 0);
  next = TakeStarts();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].run_id(), older);
  EXPECT_EQ(next[0].priority(), "normal");
  EXPECT_EQ(GetStage(younger, "s1").status(), v1::STAGE_READY);
  EXPECT_EQ(GetRun(younger).priority(), "low");
}

TEST_F(SchedulerTest, AChangedClassIsStoredAndOrdersTheQueueAfterARestart) {
  int64_t older = Submit(OneGpuRun("older"));
  int64_t younger = Submit(OneGpuRun("younger"));
  Batch([&] { ASSERT_TRUE(scheduler_->SetRunPriority(younger, "high").ok()); });
  NewScheduler();  // a coordinator restart: the queue is rebuilt from the store
  EXPECT_EQ(GetRun(younger).priority(), "high");
  EXPECT_EQ(GetRun(older).priority(), "normal");
  Connect("one", 8, 1);
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].run_id(), younger);
}

TEST_F(SchedulerTest, AClassChangeRefusesAnUnknownClassAnUnknownRunAndAnEndedOne) {
  uint64_t agent = Connect("cpu", 8, 0);
  int64_t run = Submit("name: quick\nstages:\n  a: {run: [prog]}\n");
  Result<v1::Run> out;
  Batch([&] { out = scheduler_->SetRunPriority(run, "urgent"); });
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "priority: unknown priority class 'urgent' (high, normal or low)");
  Batch([&] { out = scheduler_->SetRunPriority(9999, "high"); });
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Exit(agent, starts[0].attempt_id(), 0);
  ASSERT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
  Batch([&] { out = scheduler_->SetRunPriority(run, "high"); });
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(out.status().message(), StrCat("run ", run, " has ended: its class no longer matters"));
  EXPECT_EQ(GetRun(run).priority(), "normal");
}

}  // namespace
}  // namespace longhaul::scheduler

#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kTwo[] = R"(
name: two
stages:
  a: {run: [prog], retry: {limit: 2, backoff: 1s}}
  b: {needs: [a], run: [prog]}
)";

TEST_F(SchedulerTest, ASilentAgentsAttemptsAreUnknownThenRunningAgainWhenItReturns) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kTwo);
  int64_t id = TakeStarts()[0].attempt_id();
  Started(n1, id);
  clock_.AdvanceMs(options_.agent_timeout_ms);
  Batch();
  EXPECT_EQ(GetStage(run, "a").attempts(0).state(), v1::ATTEMPT_UNKNOWN);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_RUNNING);
  clock_.AdvanceMs(options_.lost_after_ms - options_.agent_timeout_ms - 1);
  Heartbeat(n1);  // back before lost_after
  EXPECT_EQ(GetStage(run, "a").attempts(0).state(), v1::ATTEMPT_RUNNING);
  for (int i = 0; i < 2 * options_.lost_after_ms / 5'000; ++i) {  // talking again
    clock_.AdvanceMs(5'000);
    Heartbeat(n1);
  }
  EXPECT_TRUE(TakeStarts().empty()) << "nothing may be rescheduled";
  Exit(n1, id, 0);
  EXPECT_EQ(TakeStarts().size(), 1u);
}

TEST_F(SchedulerTest, ALostAttemptIsRetriedElsewhereAndTheStaleOneIsStopped) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kTwo);
  int64_t old_id = TakeStarts()[0].attempt_id();
  Started(n1, old_id);
  uint64_t n2 = Connect("n2");
  for (int i = 0; i < options_.lost_after_ms / 5'000; ++i) {  // n2 keeps talking, n1 is silent
    clock_.AdvanceMs(5'000);
    Heartbeat(n2);
  }
  v1::Stage a = GetStage(run, "a");
  EXPECT_EQ(a.attempts(0).state(), v1::ATTEMPT_LOST);
  EXPECT_NE(a.attempts(0).reason().find("lost: agent n1 silent"), std::string::npos);
  clock_.AdvanceMs(1'000);
  Batch();
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].attempt(), 2);
  // n1 wakes up: its old attempt is fenced, and its exit counts for nothing but history.
  Heartbeat(n1);
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), old_id);
  EXPECT_EQ(cancels[0].reason(), "stale");
  Exit(n1, old_id, 0);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_RUNNING);
  Exit(n2, starts[0].attempt_id(), 0);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_SUCCEEDED);
  EXPECT_EQ(TakeStarts().size(), 1u);  // b, once
}

TEST_F(SchedulerTest, AStaleAttemptBackAfterItsRunEndedKeepsItsEventsAndExitInHistory) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit("name: one\nstages:\n  a: {run: [prog], retry: {limit: 1, backoff: 1s}}\n");
  int64_t old_id = TakeStarts()[0].attempt_id();
  Started(n1, old_id);
  uint64_t n2 = Connect("n2");
  for (int i = 0; i < options_.lost_after_ms / 5'000; ++i) {  // n1 is silent
    clock_.AdvanceMs(5'000);
    Heartbeat(n2);
  }
  clock_.AdvanceMs(1'000);
  Batch();
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Exit(n2, starts[0].attempt_id(), 0);
  ASSERT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
  ASSERT_EQ(scheduler_->FindRun(run), nullptr) << "an ended run leaves memory";
  TakeAll();

  // n1 comes back: its attempt is stopped, and what it wrote meanwhile is kept, once.
  Heartbeat(n1);
  ASSERT_EQ(TakeCancels().size(), 1u);
  std::vector<std::string> lines = {R"({"progress": {"done": 1}})", "not json",
                                    R"({"progress": {"done": 2}})"};
  Events(n1, old_id, lines);
  Events(n1, old_id, lines);  // re-sent after a reconnect
  auto acks = TakeAll();
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[1].ack_events().up_to_seq(), 3);
  Exit(n1, old_id, 143, 15);
  auto exit_ack = TakeAll();
  ASSERT_EQ(exit_ack.size(), 1u);
  EXPECT_EQ(exit_ack[0].ack_exit().attempt_id(), old_id);

  v1::ListEventsRequest req;
  req.set_run_id(run);
  req.set_stage("a");
  req.set_attempt(1);
  EXPECT_EQ(store_->ListEvents(req)->events_size(), 3);
  v1::Run after = GetRun(run);
  EXPECT_EQ(after.status(), v1::RUN_SUCCEEDED);
  const v1::Attempt& stale = after.stages(0).attempts(0);
  EXPECT_EQ(stale.state(), v1::ATTEMPT_LOST);
  EXPECT_EQ(stale.events(), 3);
  EXPECT_EQ(stale.malformed_events(), 1);
  EXPECT_EQ(stale.signal(), 15);
  EXPECT_NE(stale.reason().find("(it ended later on n1: signal 15 (SIGTERM))"), std::string::npos)
      << stale.reason();
  EXPECT_EQ(after.stages(0).attempt_count(), 2);
}

TEST_F(SchedulerTest, CoordinatorRestartReadoptsRunningAttemptsWithoutRerunning) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kTwo);
  int64_t id = TakeStarts()[0].attempt_id();
  Started(n1, id);
  clock_.AdvanceMs(120'000);  // the coordinator is down for two minutes
  NewScheduler();
  Batch();
  EXPECT_EQ(GetStage(run, "a").attempts(0).state(), v1::ATTEMPT_RUNNING);
  v1::OwnedAttempt owned;
  owned.set_attempt_id(id);
  owned.set_running(true);
  uint64_t again = Connect("n1", 4, 0, {owned});
  EXPECT_TRUE(TakeStarts().empty());
  Exit(again, id, 0);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "b");
  Exit(again, starts[0].attempt_id(), 0);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(GetStage(run, "a").attempt_count(), 1);
}

TEST_F(SchedulerTest, NoAgentIsLostBecauseTheCoordinatorWasDown) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kTwo);
  int64_t id = TakeStarts()[0].attempt_id();
  Started(n1, id);
  NewScheduler();
  clock_.AdvanceMs(options_.lost_after_ms - 1);  // within the grace after its own start
  Batch();
  EXPECT_NE(GetStage(run, "a").attempts(0).state(), v1::ATTEMPT_LOST);
  clock_.AdvanceMs(1);
  Batch();  // never came back: now it is lost
  EXPECT_EQ(GetStage(run, "a").attempts(0).state(), v1::ATTEMPT_LOST);
}

TEST_F(SchedulerTest, AStartTheAgentNeverGotIsSentAgainAfterReconnect) {
  Connect("n1");
  Submit(kTwo);
  auto first = TakeStarts();
  ASSERT_EQ(first.size(), 1u);
  NewScheduler();
  Connect("n1");  // reports nothing: it never received the start
  auto again = TakeStarts();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt_id(), first[0].attempt_id());
}

TEST_F(SchedulerTest, ARunningAttemptTheAgentForgotIsLost) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kTwo);
  int64_t id = TakeStarts()[0].attempt_id();
  Started(n1, id);
  Connect("n1");  // a new session that does not report the attempt (state dir wiped)
  v1::Stage a = GetStage(run, "a");
  EXPECT_EQ(a.attempts(0).state(), v1::ATTEMPT_LOST);
  EXPECT_EQ(a.status(), v1::STAGE_WAITING);  // lost is retried by the default policy
}

TEST_F(SchedulerTest, AnAttemptReportedForAnEndedStageIsFenced) {
  uint64_t n1 = Connect("n1");
  Submit(kTwo);
  int64_t id = TakeStarts()[0].attempt_id();
  Exit(n1, id, 0);
  TakeAll();
  v1::OwnedAttempt ghost;
  ghost.set_attempt_id(id);
  ghost.set_running(true);
  Connect("n1", 4, 0, {ghost});
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason(), "stale");
}

TEST_F(SchedulerTest, ACoordinatorStallIsNotBlamedOnAgents) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kTwo);
  int64_t id = TakeStarts()[0].attempt_id();
  Started(n1, id);
  clock_.AdvanceMs(options_.agent_timeout_ms * 3);  // SIGSTOP of the coordinator
  ASSERT_TRUE(store_->Begin().ok());
  scheduler_->Tick(/*lag_ms=*/options_.agent_timeout_ms * 3);
  ASSERT_TRUE(scheduler_->FlushToStore().ok());
  ASSERT_TRUE(store_->Commit().ok());
  scheduler_->AfterCommit();
  EXPECT_EQ(GetStage(run, "a").attempts(0).state(), v1::ATTEMPT_RUNNING);
}

TEST_F(SchedulerTest, ListAgentsShowsFreeResources) {
  Connect("n1", 4, 2);
  Submit(R"(
name: gpus
stages:
  g: {run: [prog], resources: {cpus: 1, gpus: 1}}
)");
  auto agents = scheduler_->ListAgents();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].free().gpus(), 1);
  EXPECT_DOUBLE_EQ(agents[0].free().cpus(), 3);
  EXPECT_EQ(agents[0].running_attempts(), 1);
  EXPECT_EQ(agents[0].state(), v1::AGENT_CONNECTED);
}

}  // namespace
}  // namespace longhaul::scheduler

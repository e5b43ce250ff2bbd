#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

TEST_F(SchedulerTest, AFlakyStageSucceedsOnAttemptThreeByPolicy) {
  uint64_t n1 = Connect("n1");
  int64_t submitted = clock_.NowMs();
  int64_t run = Submit(R"(
name: flaky
stages:
  flaky: {run: [prog], retry: {limit: 2, backoff: 10s, max_backoff: 1m}}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Exit(n1, starts[0].attempt_id(), 1);
  v1::Stage s = GetStage(run, "flaky");
  EXPECT_EQ(s.status(), v1::STAGE_WAITING);
  EXPECT_NE(s.reason().find("exit 1; retry 1/2 in"), std::string::npos) << s.reason();
  int64_t first_delay = s.next_retry_at_ms() - clock_.NowMs();
  EXPECT_GE(first_delay, 5'000);  // equal jitter: between half and all of the backoff
  EXPECT_LE(first_delay, 10'000);

  clock_.AdvanceMs(first_delay - 1);
  Batch();
  EXPECT_TRUE(TakeStarts().empty()) << "retried before its backoff ended";
  clock_.AdvanceMs(1);
  int64_t backoff_over = clock_.NowMs();
  Batch();
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].attempt(), 2);
  Exit(n1, starts[0].attempt_id(), 1);
  int64_t second_delay = GetStage(run, "flaky").next_retry_at_ms() - clock_.NowMs();
  EXPECT_GE(second_delay, 10'000);  // doubled
  EXPECT_LE(second_delay, 20'000);
  clock_.AdvanceMs(second_delay);
  Heartbeat(n1);  // agents speak every second; a silent one would get nothing
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].attempt(), 3);
  Exit(n1, starts[0].attempt_id(), 0);
  v1::Stage done = GetStage(run, "flaky");
  EXPECT_EQ(done.status(), v1::STAGE_SUCCEEDED);
  EXPECT_EQ(done.attempts_size(), 3);
  // Each attempt records when its stage became ready: at submission, then when each backoff
  // ended (the timeline's queued time).
  EXPECT_EQ(done.attempts(0).ready_at_ms(), submitted);
  EXPECT_EQ(done.attempts(1).ready_at_ms(), backoff_over);
  EXPECT_GT(done.attempts(2).ready_at_ms(), backoff_over);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
}

TEST_F(SchedulerTest, ProcessesKilledAfterTheStageAreSaidInTheAttemptsReason) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: leftovers
stages:
  ok: {run: [prog]}
  bad: {run: [prog]}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 2u);
  for (const auto& start : starts) {
    v1::AgentMessage m;
    m.mutable_exited()->set_attempt_id(start.attempt_id());
    m.mutable_exited()->set_exit_code(start.stage() == "ok" ? 0 : 3);
    m.mutable_exited()->set_ended_at_ms(clock_.NowMs());
    m.mutable_exited()->set_leftovers_killed(start.stage() == "ok" ? 2 : 1);
    Batch([&] { scheduler_->OnAgentMessage(n1, m); });
  }
  v1::Stage ok = GetStage(run, "ok");
  EXPECT_EQ(ok.status(), v1::STAGE_SUCCEEDED);
  ASSERT_EQ(ok.attempts_size(), 1);
  EXPECT_EQ(ok.attempts(0).reason(), "2 processes outlived the stage and were killed");
  v1::Stage bad = GetStage(run, "bad");
  ASSERT_EQ(bad.attempts_size(), 1);
  EXPECT_EQ(bad.attempts(0).reason(), "exit 3; 1 process outlived the stage and was killed");
}

TEST_F(SchedulerTest, RetriesRunOutAndTheStageFails) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: out
stages:
  x: {run: [prog], retry: {limit: 1, backoff: 1s}}
)");
  Exit(n1, TakeStarts()[0].attempt_id(), 2);
  clock_.AdvanceMs(1'000);
  Batch();
  Exit(n1, TakeStarts()[0].attempt_id(), 2);
  v1::Stage s = GetStage(run, "x");
  EXPECT_EQ(s.status(), v1::STAGE_FAILED);
  EXPECT_EQ(s.reason(), "exit 2 (after 1 retries)");
}

TEST_F(SchedulerTest, ExitCodesAndKindsLimitWhatRetries) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: codes
stages:
  only75: {run: [prog], retry: {limit: 3, backoff: 1s, exit_codes: [75]}}
  nosig: {run: [prog], retry: {limit: 3, backoff: 1s, on: [exit]}}
)");
  for (const auto& s : TakeStarts()) {
    if (s.stage() == "only75") {
      Exit(n1, s.attempt_id(), 1);
    } else {
      Exit(n1, s.attempt_id(), 0, /*signal=*/9);
    }
  }
  EXPECT_EQ(GetStage(run, "only75").status(), v1::STAGE_FAILED);
  v1::Stage nosig = GetStage(run, "nosig");
  EXPECT_EQ(nosig.status(), v1::STAGE_FAILED);
  EXPECT_EQ(nosig.reason(), "signal 9 (SIGKILL)");
}

TEST_F(SchedulerTest, AProgramThatCannotStartIsNotRetried) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: missing
stages:
  x: {run: [no-such-program], retry: {limit: 3, backoff: 1s}}
)");
  v1::AgentMessage m;
  m.mutable_exited()->set_attempt_id(TakeStarts()[0].attempt_id());
  m.mutable_exited()->set_exit_code(127);
  m.mutable_exited()->set_start_failed(true);
  m.mutable_exited()->set_reason("not found: no-such-program");
  Batch([&] { scheduler_->OnAgentMessage(n1, m); });
  v1::Stage s = GetStage(run, "x");
  EXPECT_EQ(s.status(), v1::STAGE_FAILED);
  EXPECT_EQ(s.reason(), "not found: no-such-program");
}

TEST_F(SchedulerTest, AnUnknownExitStatusIsLostAndRetriedAsInfraNotExitMinusOne) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: unknown
stages:
  x: {run: [prog], retry: {limit: 0, infra_limit: 2, backoff: 1s}}
)");
  auto starts = TakeStarts();
  Started(n1, starts[0].attempt_id());
  v1::AgentMessage m;
  m.mutable_exited()->set_attempt_id(starts[0].attempt_id());
  m.mutable_exited()->set_exit_code(-1);
  m.mutable_exited()->set_reason("exit status unknown: exit.json empty (disk full?)");
  Batch([&] { scheduler_->OnAgentMessage(n1, m); });
  v1::Stage s = GetStage(run, "x");
  EXPECT_EQ(s.attempts(0).state(), v1::ATTEMPT_LOST);
  EXPECT_EQ(s.attempts(0).reason(), "exit status unknown: exit.json empty (disk full?)");
  // limit 0 would fail it for good; the infrastructure's budget retries it.
  EXPECT_EQ(s.status(), v1::STAGE_WAITING) << s.reason();
  EXPECT_NE(s.reason().find("infrastructure retry 1/2"), std::string::npos) << s.reason();
}

TEST_F(SchedulerTest, WallTimeoutStopsTheAttemptAndRetries) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: slow
stages:
  x: {run: [prog], timeout: 30s, grace: 2s, retry: {limit: 1, backoff: 1s}}
)");
  auto starts = TakeStarts();
  Started(n1, starts[0].attempt_id());
  clock_.AdvanceMs(29'999);
  Batch();
  EXPECT_TRUE(TakeCancels().empty());
  clock_.AdvanceMs(1);
  Batch();
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason(), "timeout");
  EXPECT_EQ(cancels[0].grace_ms(), 2'000);
  Exit(n1, starts[0].attempt_id(), 0, 15);
  v1::Stage s = GetStage(run, "x");
  EXPECT_EQ(s.attempts(0).state(), v1::ATTEMPT_KILLED);
  EXPECT_EQ(s.attempts(0).reason(), "timeout: ran longer than 30s");
  EXPECT_EQ(s.status(), v1::STAGE_WAITING);  // "timeout" is in the default retry.on
}

TEST_F(SchedulerTest, AStageWithoutProgressIsStalledAndRetried) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: stall
stages:
  x: {run: [prog], stall_timeout: 10s, retry: {limit: 1, backoff: 1s}}
)");
  auto starts = TakeStarts();
  int64_t id = starts[0].attempt_id();
  Started(n1, id);
  for (int i = 1; i <= 5; ++i) {  // progress every 8 s keeps it alive
    clock_.AdvanceMs(8'000);
    Events(n1, id, {R"({"progress": {"done": )" + std::to_string(i) + "}}"}, i);
  }
  EXPECT_TRUE(TakeCancels().empty());
  clock_.AdvanceMs(5'000);
  Heartbeat(n1);
  clock_.AdvanceMs(5'000);
  Heartbeat(n1);
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason(), "stalled");
  Exit(n1, id, 0, 15);
  EXPECT_EQ(GetStage(run, "x").attempts(0).reason(), "stalled: no progress for 10s");
  clock_.AdvanceMs(1'000);
  Heartbeat(n1);
  EXPECT_EQ(TakeStarts().size(), 1u);
}

}  // namespace
}  // namespace longhaul::scheduler

#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kServed[] = R"(
name: served
params: {n: "3"}
stages:
  prep: {run: [prog, prep]}
  server:
    kind: service
    needs: [prep]
    run: [serve]
    ready_timeout: 1m
    retry: {limit: 1, backoff: 1s}
  client:
    needs: [server]
    run: [client, "${server.outputs.endpoint}", "${params.n}"]
    retry: {limit: 1, backoff: 1s}
)";

const v1::StartAttempt* Find(const std::vector<v1::StartAttempt>& starts, const std::string& s) {
  for (const auto& x : starts) {
    if (x.stage() == s) return &x;
  }
  return nullptr;
}

TEST_F(SchedulerTest, AServiceStartsWhenNeededServesAndStopsAfterItsLastDependent) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kServed);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "prep");
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(starts[0].stage(), "server");
  int64_t server = starts[0].attempt_id();
  EXPECT_EQ(GetStage(run, "server").status(), v1::STAGE_STARTING);
  Events(
      n1, server,
      {R"({"output": {"name": "endpoint", "value": "http://127.0.0.1:9"}})", R"({"ready": {}})"});
  EXPECT_EQ(GetStage(run, "server").status(), v1::STAGE_SERVING);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "client");
  EXPECT_EQ(starts[0].argv(1), "http://127.0.0.1:9");
  Exit(n1, starts[0].attempt_id(), 0);
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), server);
  EXPECT_EQ(cancels[0].reason(), "stopped");
  EXPECT_EQ(GetRun(run).status(), v1::RUN_RUNNING);  // until the service has really stopped
  Exit(n1, server, 0, 15);
  EXPECT_EQ(GetStage(run, "server").status(), v1::STAGE_STOPPED);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(scheduler_->ListAgents()[0].free().cpus(), 4);  // everything released
}

TEST_F(SchedulerTest, AServiceThatNeverGetsReadyFailsByReadyTimeoutAndIsRetried) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kServed);
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  int64_t server = TakeStarts()[0].attempt_id();
  Started(n1, server);
  for (int i = 0; i < 12; ++i) {  // a minute of heartbeats, and no ready
    clock_.AdvanceMs(5'000);
    Heartbeat(n1);
  }
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason(), "timeout");
  Exit(n1, server, 0, 15);
  v1::Stage s = GetStage(run, "server");
  EXPECT_EQ(s.attempts(0).reason(), "timeout: not ready after 1m00s");
  EXPECT_EQ(s.status(), v1::STAGE_WAITING);
  clock_.AdvanceMs(1'000);
  Heartbeat(n1);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "server");
  EXPECT_EQ(starts[0].attempt(), 2);
}

TEST_F(SchedulerTest, AServiceNeverReadyThroughAllItsAttemptsFailsWithItsLastReason) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kServed);
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto starts = TakeStarts();
    ASSERT_EQ(starts.size(), 1u) << "attempt " << attempt;
    ASSERT_EQ(starts[0].stage(), "server");
    Started(n1, starts[0].attempt_id());
    for (int i = 0; i < 12; ++i) {  // a minute without ready
      clock_.AdvanceMs(5'000);
      Heartbeat(n1);
    }
    ASSERT_EQ(TakeCancels().size(), 1u);
    Exit(n1, starts[0].attempt_id(), 0, 15);
    clock_.AdvanceMs(1'000);
    Heartbeat(n1);
  }
  v1::Stage server = GetStage(run, "server");
  EXPECT_EQ(server.status(), v1::STAGE_FAILED) << server.reason();
  EXPECT_EQ(server.reason().rfind("timeout: not ready after 1m00s", 0), 0u) << server.reason();
  EXPECT_EQ(GetStage(run, "client").status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_FAILED);
}

TEST_F(SchedulerTest, AServiceKilledWhileItsLastDependentFailsEndsFailedNotSkipped) {
  uint64_t n1 = Connect("n1");
  // The client has no retries: losing the service fails it, while the service waits to retry.
  int64_t run = Submit(R"(
name: served
stages:
  server:
    kind: service
    run: [serve]
    retry: {limit: 1, backoff: 1m}
  client:
    needs: [server]
    run: [client]
)");
  int64_t server = TakeStarts()[0].attempt_id();
  Events(n1, server, {R"({"ready": {}})"});
  int64_t client = TakeStarts()[0].attempt_id();
  Exit(n1, server, 1);  // the engine crashed
  ASSERT_EQ(TakeCancels().size(), 1u);
  Exit(n1, client, 0, 15);
  EXPECT_EQ(GetStage(run, "client").status(), v1::STAGE_FAILED);
  v1::Stage s = GetStage(run, "server");
  EXPECT_EQ(s.status(), v1::STAGE_FAILED) << s.reason();
  EXPECT_EQ(s.reason(), "exit 1");
  EXPECT_EQ(GetRun(run).status(), v1::RUN_FAILED);
  EXPECT_TRUE(TakeStarts().empty()) << "the service was retried for no one";
}

TEST_F(SchedulerTest, AServiceThatDiesMidwayFailsItsRunningDependentsWithServiceLost) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kServed);
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  int64_t server = TakeStarts()[0].attempt_id();
  Events(n1, server,
         {R"({"output": {"name": "endpoint", "value": "http://x"}})", R"({"ready": {}})"});
  int64_t client = TakeStarts()[0].attempt_id();
  Exit(n1, server, 1);  // the engine crashed
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), client);
  EXPECT_EQ(cancels[0].reason(), "service_lost");
  Exit(n1, client, 0, 15);
  v1::Stage c = GetStage(run, "client");
  EXPECT_EQ(c.attempts(0).reason(), "service_lost: service 'server' ended: exit 1");
  EXPECT_EQ(c.status(), v1::STAGE_WAITING);  // its retry policy took it
  EXPECT_EQ(GetStage(run, "server").status(), v1::STAGE_WAITING);
  clock_.AdvanceMs(1'000);
  Heartbeat(n1);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);  // the service comes back first; the client waits for it
  EXPECT_EQ(starts[0].stage(), "server");
  Events(n1, starts[0].attempt_id(),
         {R"({"output": {"name": "endpoint", "value": "http://y"}})", R"({"ready": {}})"});
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "client");
  EXPECT_EQ(starts[0].argv(1), "http://y");
}

TEST_F(SchedulerTest, AServiceWhoseDependentsAreAllReusedIsNeverStarted) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kServed);
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  int64_t server = TakeStarts()[0].attempt_id();
  Events(n1, server, {R"({"ready": {}})", R"({"output": {"name": "endpoint", "value": "e"}})"});
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  Exit(n1, server, 0, 15);
  ASSERT_EQ(GetRun(first).status(), v1::RUN_SUCCEEDED);

  int64_t again = Submit(kServed);
  EXPECT_TRUE(TakeStarts().empty());
  v1::Run r = GetRun(again);
  EXPECT_EQ(r.status(), v1::RUN_SUCCEEDED);
  for (const auto& s : r.stages()) EXPECT_EQ(s.status(), v1::STAGE_CACHED) << s.name();

  // The client's param changes: the client must run, so the service it needs starts too,
  // while prep is still reused.
  int64_t third = Submit(kServed, {{"n", "4"}});
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "server");
  v1::Stage prep = GetStage(third, "prep");
  EXPECT_EQ(prep.status(), v1::STAGE_CACHED);
  EXPECT_EQ(prep.cached_from_run_id(), first);
  EXPECT_EQ(GetStage(third, "server").plan_reason(), "needed by client");
  EXPECT_EQ(GetStage(third, "client").plan_reason(), "param n changed (3 -> 4)");
}

}  // namespace
}  // namespace longhaul::scheduler

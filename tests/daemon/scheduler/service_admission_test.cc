// Services and their consumers: a service starts only with room for a consumer beside it,
// consumers of running services go first, a consumer's services start together or not at all,
// a group that can never fit is refused at submission, and a stuck set of services yields.
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

bool HasStage(const std::vector<v1::StartAttempt>& starts, const std::string& stage) {
  for (const auto& s : starts) {
    if (s.stage() == stage) return true;
  }
  return false;
}

// The eagle3-sweep example's shape: after `prep`, three servers of one CPU, each with a
// benchmark of half a CPU.
constexpr char kSweep[] = R"(
name: sweep
defaults: {resources: {cpus: 0.5}}
stages:
  prep: {run: [prog]}
  server:
    kind: service
    foreach: {n: [1, 2, 3]}
    needs: [prep]
    run: [serve, "${item.n}"]
    resources: {cpus: 1}
  bench:
    foreach: {n: [1, 2, 3]}
    needs: [server, prep]
    run: [bench, "${server-${item.n}.outputs.endpoint}"]
)";

TEST_F(SchedulerTest, ServiceStartsOnlyWithRoomForAConsumerBesideIt) {
  uint64_t n1 = Connect("n1", 2);
  int64_t run = Submit(kSweep);
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  int served = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<v1::StartAttempt> starts = TakeStarts();
    ASSERT_EQ(starts.size(), 1u) << "one server at a time on two CPUs, round " << round;
    std::string server = starts[0].stage();
    ASSERT_EQ(server.rfind("server-", 0), 0u) << server;
    // The oldest of the others waits, and says for what.
    for (int n = 1; n <= 3; ++n) {
      v1::Stage other = GetStage(run, "server-" + std::to_string(n));
      if (other.status() != v1::STAGE_READY) continue;
      EXPECT_EQ(other.reason(),
                "waiting for an agent with 1 cpus free together with room for a consumer that "
                "needs it");
      break;
    }
    int64_t server_attempt = starts[0].attempt_id();
    Events(n1, server_attempt,
           {R"({"output": {"name": "endpoint", "value": "http://e"}})", R"({"ready": {}})"});
    starts = TakeStarts();
    ASSERT_EQ(starts.size(), 1u);
    EXPECT_EQ(starts[0].stage(), "bench-" + server.substr(7));
    Exit(n1, starts[0].attempt_id(), 0);
    ASSERT_EQ(TakeCancels().size(), 1u);
    Exit(n1, server_attempt, 0, 15);
    ++served;
  }
  EXPECT_EQ(served, 3);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(scheduler_->ListAgents()[0].free().cpus(), 2);
}

TEST_F(SchedulerTest, AConsumerOfARunningServiceGoesBeforeANewService) {
  uint64_t n1 = Connect("n1", 3);
  int64_t run = Submit(R"(
name: first
defaults: {resources: {cpus: 1}}
stages:
  prep: {run: [prog]}
  a: {kind: service, needs: [prep], run: [serve]}
  a1: {needs: [a], run: [c]}
  a2: {needs: [a, prep], run: [c], resources: {cpus: 2}}
  b: {kind: service, needs: [prep], run: [serve]}
  b1: {needs: [b], run: [c]}
)");
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  // a with room for a2 (its largest consumer): 3 CPUs; b waits.
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "a");
  int64_t a = starts[0].attempt_id();
  Events(n1, a, {R"({"ready": {}})"});
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "a2");
  int64_t a2 = starts[0].attempt_id();
  Exit(n1, a2, 0);
  // 2 CPUs free: b with b1 would fit, but a1, a consumer of the running a, goes first.
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "a1");
  EXPECT_EQ(GetStage(run, "b").status(), v1::STAGE_READY);
  // a1 done, a stops; b and room for b1 fit beside it as it goes.
  Exit(n1, starts[0].attempt_id(), 0);
  std::vector<std::string> sent;
  for (const v1::CoordinatorMessage& m : TakeAll()) {
    if (m.has_cancel()) sent.push_back("cancel " + std::to_string(m.cancel().attempt_id()));
    if (m.has_start()) sent.push_back("start " + m.start().stage());
  }
  EXPECT_EQ(sent, (std::vector<std::string>{"cancel " + std::to_string(a), "start b"}));
}

TEST_F(SchedulerTest, AConsumerOfTwoServicesGetsBothTogetherOrNone) {
  uint64_t n1 = Connect("n1", 3);
  int64_t run = Submit(R"(
name: pair
defaults: {resources: {cpus: 1}}
stages:
  prep: {run: [prog], resources: {cpus: 2}}
  hog: {run: [prog], resources: {cpus: 2}}
  x: {kind: service, needs: [prep], run: [serve]}
  y: {kind: service, needs: [prep], run: [serve]}
  both: {needs: [x, y], run: [c]}
)");
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(starts[0].stage(), "prep");
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(starts[0].stage(), "hog");  // tasks first
  // One CPU free: x alone would fit, but not x, y and `both` together: none starts.
  EXPECT_EQ(GetStage(run, "x").status(), v1::STAGE_READY);
  EXPECT_EQ(GetStage(run, "y").status(), v1::STAGE_READY);
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_TRUE(HasStage(starts, "x") && HasStage(starts, "y"));
}

TEST_F(SchedulerTest, AGroupThatCanNeverFitIsRefusedAtSubmitWithTheNumbers) {
  Connect("n1", 2, 1);
  auto wf = workflow::ParseWorkflow(R"(
name: toobig
stages:
  server: {kind: service, run: [serve], resources: {cpus: 1, gpus: 1}}
  bench: {needs: [server], run: [c], resources: {cpus: 0.5, gpus: 1}}
)",
                                    "t.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  SubmitInput in;
  in.workflow = *wf;
  in.path = "t.yaml";
  Status refused;
  Batch([&] { refused = scheduler_->Submit(std::move(in)).status(); });
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "stage 'bench' (0.5 cpus, 1 GPUs) with the services it needs, 'server' (1 cpus, 1 "
            "GPUs), which must run beside it, can never fit on the registered agents (n1 2 "
            "cpus, 16384 MiB, 1 GPUs); lower its resources, or register an agent with room for "
            "it and submit again");
  EXPECT_EQ(scheduler_->active_runs(), 0u);
}

TEST_F(SchedulerTest, NothingIsRefusedWhileNoAgentIsRegistered) {
  int64_t run = Submit(R"(
name: first
stages:
  big: {run: [prog], resources: {cpus: 64, gpus: 8}}
)");
  EXPECT_EQ(GetStage(run, "big").status(), v1::STAGE_READY);
}

// A service whose second consumer needs a task that needs the service's room: the admission
// rule cannot foresee it (the consumer was not wanted yet when the service started).
constexpr char kLateConsumer[] = R"(
name: late
stages:
  a: {kind: service, run: [serve], resources: {cpus: 1}, retry: {limit: 0}}
  a1: {needs: [a], run: [c], resources: {cpus: 0.5}}
  t: {needs: [a1], run: [c], resources: {cpus: 2}}
  a2: {needs: [a, t], run: [c], resources: {cpus: 0.5}}
)";

TEST_F(SchedulerTest, ServicesHoldingTheRoomAReadyStageWaitsForYieldOneWithoutARetry) {
  uint64_t n1 = Connect("n1", 2);
  int64_t run = Submit(kLateConsumer);
  int64_t a = TakeStarts()[0].attempt_id();
  Events(n1, a, {R"({"ready": {}})"});
  Exit(n1, TakeStarts()[0].attempt_id(), 0);  // a1
  // t waits for the CPU that `a`, waiting for a2, holds: a is stopped to free it.
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), a);
  EXPECT_EQ(cancels[0].reason(), "yielded");
  EXPECT_NE(GetStage(run, "t").reason().find("held by service 'a'"), std::string::npos)
      << GetStage(run, "t").reason();
  Exit(n1, a, 0, 15);
  v1::Stage served = GetStage(run, "a");
  EXPECT_EQ(served.status(), v1::STAGE_WAITING);
  // Its retry limit is 0: had the stop spent a retry, it would have failed.
  EXPECT_NE(served.attempts(0).reason().find("yielded: every ready stage waits for room"),
            std::string::npos)
      << served.attempts(0).reason();
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "t");
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "a");  // wanted again by a2
  Events(n1, starts[0].attempt_id(), {R"({"ready": {}})"});
  int64_t again = starts[0].attempt_id();
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "a2");
  Exit(n1, starts[0].attempt_id(), 0);
  Exit(n1, again, 0, 15);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
}

TEST_F(SchedulerTest, AWaitReasonSaysWhenServicesWaitingForTheStageHoldItsRoom) {
  uint64_t n1 = Connect("n1", 3);
  int64_t run = Submit(R"(
name: held
stages:
  a: {kind: service, run: [serve], resources: {cpus: 1.5}}
  small: {needs: [a], run: [c], resources: {cpus: 0.5}}
  hog: {needs: [small], run: [c], resources: {cpus: 1}}
  later: {needs: [a, small], run: [c], resources: {cpus: 1}}
)");
  int64_t a = TakeStarts()[0].attempt_id();
  Events(n1, a, {R"({"ready": {}})"});
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "small");
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "hog");
  EXPECT_EQ(GetStage(run, "later").reason(),
            "waiting for an agent with 1 cpus free (on n1 the room is held by service 'a', "
            "which waits for it)");
  EXPECT_TRUE(TakeCancels().empty()) << "a task runs: nothing is stuck";
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "later");
}

}  // namespace
}  // namespace longhaul::scheduler

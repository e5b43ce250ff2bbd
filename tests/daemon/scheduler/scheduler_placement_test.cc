// Placement and infrastructure failures: retry.infra_limit, avoiding a failed node,
// node_selector labels, GPUs of one agent and the gang reservation, upstream locality (also
// after a cached stage), and data locality: outputs not under a shared path pin their readers.
#include <gmock/gmock.h>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST_F(SchedulerTest, PreemptionSpendsTheInfraBudgetNotTheStagesOwn) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: preempt
stages:
  x: {run: [prog], retry: {limit: 1, infra_limit: 2, backoff: 1s}}
)");
  auto next = [&] {
    clock_.AdvanceMs(4'000);  // past any of these backoffs (1s doubled, jittered)
    Batch();
    auto starts = TakeStarts();
    EXPECT_EQ(starts.size(), 1u);
    return starts.empty() ? int64_t{0} : starts[0].attempt_id();
  };
  ExecutorEnded(n1, TakeStarts()[0].attempt_id(), "preempted");
  v1::Stage s = GetStage(run, "x");
  EXPECT_EQ(s.status(), v1::STAGE_WAITING);
  EXPECT_THAT(s.reason(), HasSubstr("preempted (test); infrastructure retry 1/2 in"));
  ExecutorEnded(n1, next(), "node_fail");  // a local agent: n1 is avoided from now on
  EXPECT_THAT(GetStage(run, "x").reason(), HasSubstr("infrastructure retry 2/2"));
  uint64_t n2 = Connect("n2");
  // Two infrastructure failures, and the stage's own retry is still there.
  Exit(n2, next(), 1);
  EXPECT_THAT(GetStage(run, "x").reason(), HasSubstr("exit 1; retry 1/1 in"));
  // The third infrastructure failure is one too many.
  ExecutorEnded(n2, next(), "preempted");
  s = GetStage(run, "x");
  EXPECT_EQ(s.status(), v1::STAGE_FAILED);
  EXPECT_EQ(s.reason(), "preempted (test) (after 2 infrastructure retries)");
  EXPECT_EQ(s.attempts_size(), 4);
}

TEST_F(SchedulerTest, InfraRetriesDefaultToFiveWhenTheStageHasNoRetries) {
  uint64_t n1 = Connect("n1");
  int64_t run =
      Submit("name: d\nstages:\n  x: {run: [prog], retry: {backoff: 1s, max_backoff: 1s}}\n");
  for (int i = 1; i <= 5; ++i) {
    auto starts = TakeStarts();
    ASSERT_EQ(starts.size(), 1u) << i;
    ExecutorEnded(n1, starts[0].attempt_id(), "preempted");
    EXPECT_THAT(GetStage(run, "x").reason(), HasSubstr(StrCat("infrastructure retry ", i, "/5")));
    clock_.AdvanceMs(1'000);
    Batch();
  }
  ExecutorEnded(n1, TakeStarts()[0].attempt_id(), "preempted");
  EXPECT_EQ(GetStage(run, "x").status(), v1::STAGE_FAILED);
  // A manual retry gives both budgets back.
  Batch([&] { ASSERT_TRUE(scheduler_->Retry(run, "x").ok()); });
  EXPECT_EQ(TakeStarts().size(), 1u);
}

TEST_F(SchedulerTest, TheInfraRetryCountSurvivesACoordinatorRestart) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: restart
stages:
  x: {run: [prog], retry: {infra_limit: 2, backoff: 1s, max_backoff: 1s}}
)");
  ExecutorEnded(n1, TakeStarts()[0].attempt_id(), "preempted");
  NewScheduler();
  n1 = Connect("n1");
  clock_.AdvanceMs(1'000);
  Batch();
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  ExecutorEnded(n1, starts[0].attempt_id(), "preempted");
  EXPECT_THAT(GetStage(run, "x").reason(), HasSubstr("infrastructure retry 2/2"));
}

TEST_F(SchedulerTest, NodeFailOnALocalAgentKeepsTheNextAttemptsOffIt) {
  uint64_t big = Connect("big", 8);
  int64_t run = Submit("name: nf\nstages:\n  x: {run: [prog], retry: {backoff: 1s}}\n");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  ExecutorEnded(big, starts[0].attempt_id(), "node_fail");
  clock_.AdvanceMs(1'000);
  Batch();
  EXPECT_THAT(TakeStarts(), IsEmpty()) << "the only agent's node failed";
  v1::Stage s = GetStage(run, "x");
  EXPECT_EQ(s.status(), v1::STAGE_READY);
  EXPECT_EQ(s.reason(), "waiting for an agent with 1 cpus free (not on big: its node failed)");
  Connect("small", 2);  // fewer free CPUs than big, but big is out
  s = GetStage(run, "x");
  EXPECT_EQ(s.status(), v1::STAGE_RUNNING);
  EXPECT_EQ(s.agent_id(), "small");
}

TEST_F(SchedulerTest, NodeFailOnASlurmAgentExcludesTheNodeNotTheAgent) {
  uint64_t cluster = ConnectLabeled("cluster", 64, 0, {}, "slurm");
  int64_t run = Submit("name: nf\nstages:\n  x: {run: [prog], retry: {backoff: 1s}}\n");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_THAT(starts[0].exclude_nodes(), IsEmpty());
  ExecutorEnded(cluster, starts[0].attempt_id(), "node_fail", "c7");
  clock_.AdvanceMs(1'000);
  Batch();
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_THAT(starts[0].exclude_nodes(), ElementsAre("c7"));
  ExecutorEnded(cluster, starts[0].attempt_id(), "node_fail", "c9");
  clock_.AdvanceMs(2'000);
  Batch();
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_THAT(starts[0].exclude_nodes(), ElementsAre("c7", "c9"));
  EXPECT_EQ(GetStage(run, "x").agent_id(), "cluster");
}

TEST_F(SchedulerTest, NodeSelectorPicksByLabelsAndSaysWhenNoAgentMatches) {
  ConnectLabeled("h100", 8, 0, {{"gpu", "h100"}});
  ConnectLabeled("h200", 4, 0, {{"gpu", "h200"}, {"zone", "a"}});
  // Same resources, different selectors: the one nobody matches does not hold up the other.
  int64_t run = Submit(R"(
name: sel
stages:
  nowhere: {run: [prog], node_selector: {gpu: a100}}
  train: {run: [prog], node_selector: {gpu: h200}}
  any: {run: [prog]}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(GetStage(run, "train").agent_id(), "h200");
  EXPECT_EQ(GetStage(run, "any").agent_id(), "h100");  // most free CPUs
  v1::Stage s = GetStage(run, "nowhere");
  EXPECT_EQ(s.status(), v1::STAGE_READY);
  EXPECT_EQ(s.reason(), "no agent matches node_selector {gpu: a100}");
  ConnectLabeled("a100", 2, 0, {{"gpu", "a100"}});
  s = GetStage(run, "nowhere");
  EXPECT_EQ(s.status(), v1::STAGE_RUNNING);
  EXPECT_EQ(s.agent_id(), "a100");
}

TEST_F(SchedulerTest, WithNoAgentConnectedAReadyStageSaysSoNotThatItWaitsForRoom) {
  int64_t run = Submit(R"(
name: alone
stages:
  a: {run: [prog]}
  b: {run: [prog], node_selector: {gpu: h200}}
)");
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_READY);
  EXPECT_EQ(GetStage(run, "a").reason(),
            "no agent is connected (waiting for an agent with 1 cpus free)");
  EXPECT_EQ(GetStage(run, "b").reason(),
            "no agent is connected (waiting for an agent with 1 cpus free)");
  // An agent with no room for it: now it is a question of room.
  uint64_t small = Connect("small", 0.5);
  EXPECT_EQ(GetStage(run, "a").reason(), "waiting for an agent with 1 cpus free");
  EXPECT_EQ(GetStage(run, "b").reason(), "no agent matches node_selector {gpu: h200}");
  // The only agent goes away: the reason says so again.
  Batch([&] { scheduler_->OnAgentDisconnected(small); });
  EXPECT_EQ(GetStage(run, "a").reason(),
            "no agent is connected (waiting for an agent with 1 cpus free)");
  Connect("big", 4);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_RUNNING);
}

TEST_F(SchedulerTest, AMatchingAgentWithoutRoomMakesItWaitForRoom) {
  uint64_t h200 = ConnectLabeled("h200", 1, 0, {{"gpu", "h200"}});
  int64_t run = Submit(R"(
name: sel
stages:
  a: {run: [prog], node_selector: {gpu: h200}}
  b: {run: [prog], node_selector: {gpu: h200}}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(GetStage(run, "b").reason(), "waiting for an agent with 1 cpus free");
  Exit(h200, starts[0].attempt_id(), 0);
  EXPECT_EQ(TakeStarts().size(), 1u);
}

TEST_F(SchedulerTest, GpusComeFromOneAgentNeverSplit) {
  Connect("two", 8, 2);
  uint64_t four = Connect("four", 8, 4);
  int64_t run = Submit(R"(
name: gang
stages:
  three: {run: [prog], resources: {gpus: 3}}
  another_three: {run: [prog], resources: {gpus: 3}}
  two: {run: [prog], resources: {gpus: 2}}
)");
  // 3 + 3 GPUs: only one of them fits, though 6 GPUs are free in all; the 2-GPU stage fits.
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].stage(), "three");
  EXPECT_THAT(starts[0].gpus(), ElementsAre(0, 1, 2));
  EXPECT_EQ(GetStage(run, "three").agent_id(), "four");
  EXPECT_EQ(GetStage(run, "two").agent_id(), "two");
  v1::Stage waiting = GetStage(run, "another_three");
  EXPECT_EQ(waiting.status(), v1::STAGE_READY);
  EXPECT_EQ(waiting.reason(), "waiting for an agent with 1 cpus, 3 GPUs free");
  Exit(four, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "another_three");
  EXPECT_EQ(GetStage(run, "another_three").agent_id(), "four");
}

TEST_F(SchedulerTest, AStagePrefersTheAgentThatRanItsUpstream) {
  Connect("roomy", 16);
  uint64_t zone_b = ConnectLabeled("zone-b", 4, 0, {{"zone", "b"}});
  int64_t run = Submit(R"(
name: local
stages:
  make: {run: [prog], node_selector: {zone: b}}
  use: {run: [prog], needs: [make]}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Exit(zone_b, starts[0].attempt_id(), 0);
  ASSERT_EQ(TakeStarts().size(), 1u);
  EXPECT_EQ(GetStage(run, "use").agent_id(), "zone-b") << "its input is there";
}

TEST_F(SchedulerTest, AGangStageReservesItsAgentSoSmallerOnesDoNotStarveIt) {
  uint64_t eight = Connect("eight", 16, 8);
  std::string small =
      "stages:\n  a: {run: [prog], resources: {gpus: 1}}\n"
      "  b: {run: [prog], resources: {gpus: 1}}\n"
      "  c: {run: [prog], resources: {gpus: 1}}\n"
      "  d: {run: [prog], resources: {gpus: 1}}\n";
  Submit("name: early\n" + small);
  std::vector<v1::StartAttempt> early = TakeStarts();
  ASSERT_EQ(early.size(), 4u);
  int64_t gang = Submit("name: gang\nstages:\n  all: {run: [prog], resources: {gpus: 8}}\n");
  EXPECT_TRUE(TakeStarts().empty()) << "4 of 8 GPUs are held";
  // Younger 1-GPU stages find 4 GPUs free, but the gang stage holds what is free for itself;
  // a CPU-only stage still gets one of the CPUs the gang stage does not need.
  int64_t late = Submit("name: late\n" + small + "  cpu: {run: [prog]}\n");
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "cpu");
  EXPECT_EQ(GetStage(late, "a").status(), v1::STAGE_READY);
  EXPECT_EQ(GetStage(late, "a").reason(),
            StrCat("waiting for an agent with 1 cpus, 1 GPUs free (eight's free resources are held "
                   "for run ",
                   gang, " stage all, which asks for 8 GPUs and waits first)"));
  // As the early stages end, their GPUs go to no one until the gang stage fits.
  for (size_t i = 0; i + 1 < early.size(); ++i) {
    Exit(eight, early[i].attempt_id(), 0);
    EXPECT_TRUE(TakeStarts().empty()) << i;
  }
  Exit(eight, early.back().attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "all");
  EXPECT_THAT(starts[0].gpus(), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(GetStage(gang, "all").agent_id(), "eight");
  Exit(eight, starts[0].attempt_id(), 0);
  EXPECT_EQ(TakeStarts().size(), 4u) << "then the small ones";
  EXPECT_EQ(GetStage(late, "a").reason(), "");
}

TEST_F(SchedulerTest, AGangStageThatNoAgentCanHoldReservesNothing) {
  // The one agent that could hold it is registered but not connected.
  uint64_t away = Connect("eight", 16, 8);
  Batch([&] { scheduler_->OnAgentDisconnected(away); });
  Connect("two", 16, 2);
  int64_t run = Submit(R"(
name: never
stages:
  huge: {run: [prog], resources: {gpus: 8}}
  one: {run: [prog], resources: {gpus: 1}}
)");
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "one");
  EXPECT_EQ(GetStage(run, "huge").reason(), "waiting for an agent with 1 cpus, 8 GPUs free");
}

TEST_F(SchedulerTest, AStageAfterACachedOneGoesWhereTheCachedArtifactsAre) {
  Connect("roomy", 16);
  uint64_t zone_b = ConnectLabeled("zone-b", 4, 0, {{"zone", "b"}});
  const std::string yaml = R"(
name: pivot
stages:
  make: {run: [prog], node_selector: {zone: b}}
  use: {run: [prog], needs: [make], cache: false}
)";
  int64_t first = Submit(yaml);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Events(zone_b, starts[0].attempt_id(),
         {R"({"artifact": {"name": "model", "path": "model.bin", "bytes": 3}})"});
  Exit(zone_b, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Exit(zone_b, starts[0].attempt_id(), 0);
  ASSERT_EQ(GetRun(first).status(), v1::RUN_SUCCEEDED);
  int64_t second = Submit(yaml);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "use");
  v1::Stage make = GetStage(second, "make");
  EXPECT_EQ(make.status(), v1::STAGE_CACHED);
  EXPECT_EQ(make.agent_id(), "zone-b") << "where its artifact is";
  EXPECT_EQ(GetStage(second, "use").agent_id(), "zone-b") << "not roomy, which has more CPUs";
}

// Data locality. `make` reports a file it made as an output; `use` reads it and asks for both
// of zone-b's CPUs, so it cannot start there while `f` (another run) holds one.
const char kMakeUse[] = R"(
name: files
stages:
  make: {run: [prog], node_selector: {zone: b}}
  use: {run: [prog], needs: [make], resources: {cpus: 2}}
)";
const char kFiller[] = "name: filler\nstages:\n  f: {run: [prog], node_selector: {zone: b}}\n";

TEST_F(SchedulerTest, AnOutputNotUnderASharedPathKeepsItsReaderOnTheProducersAgent) {
  Connect("roomy", 16);
  uint64_t zone_b = ConnectLabeled("zone-b", 2, 0, {{"zone", "b"}});
  int64_t run = Submit(kMakeUse);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  int64_t make = starts[0].attempt_id();
  int64_t filler = Submit(kFiller);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  int64_t f = starts[0].attempt_id();
  Events(zone_b, make,
         {R"({"output": {"name": "data", "value": "/data/zone-b/runs/1/make/attempt-1/x.jsonl"}})",
          R"({"output": {"name": "rows", "value": "100"}})"});
  Exit(zone_b, make, 0);
  EXPECT_TRUE(TakeStarts().empty()) << "roomy has room but not the file";
  v1::Stage use = GetStage(run, "use");
  EXPECT_EQ(use.status(), v1::STAGE_READY);
  EXPECT_EQ(use.reason(),
            "waiting for an agent with 2 cpus free on zone-b (where the outputs it needs are)");
  Exit(zone_b, f, 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "use");
  EXPECT_EQ(GetStage(run, "use").agent_id(), "zone-b");
  EXPECT_EQ(GetRun(filler).status(), v1::RUN_SUCCEEDED);
}

TEST_F(SchedulerTest, AnOutputUnderAPathBothAgentsShareMayBeReadElsewhere) {
  ConnectShared("roomy", 16, {"/scratch", "/lustre/"});
  uint64_t zone_b = ConnectHello("zone-b", 2, 0, {}, {{"zone", "b"}}, "local", {"/lustre"});
  int64_t run = Submit(kMakeUse);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  int64_t make = starts[0].attempt_id();
  Submit(kFiller);
  ASSERT_EQ(TakeStarts().size(), 1u);
  Events(zone_b, make, {R"({"output": {"name": "data", "value": "/lustre/runs/1/make"}})"});
  Exit(zone_b, make, 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "use");
  EXPECT_EQ(GetStage(run, "use").agent_id(), "roomy") << "both agents share /lustre";
}

TEST_F(SchedulerTest, AStageWhoseInputsAreOnAnAgentThatLeftWaitsForItAndSaysSo) {
  ConnectShared("roomy", 16, {"/lustre"});
  // zone-b shares /lustre too, but the output is not under it ("/lustrex" is another path).
  uint64_t zone_b = ConnectHello("zone-b", 2, 0, {}, {{"zone", "b"}}, "local", {"/lustre"});
  int64_t run = Submit(kMakeUse);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  int64_t make = starts[0].attempt_id();
  Submit(kFiller);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  int64_t f = starts[0].attempt_id();
  Events(zone_b, make, {R"({"output": {"name": "data", "value": "/lustrex/make/x.jsonl"}})"});
  Exit(zone_b, make, 0);
  Batch([&] { scheduler_->OnAgentDisconnected(zone_b); });
  Connect("another", 16);  // a dispatch pass with zone-b gone
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_EQ(GetStage(run, "use").reason(),
            "waiting for agent zone-b, which holds the outputs of make (/lustrex/make/x.jsonl) "
            "(not under a --shared-path), which is not connected");
  // zone-b comes back, and f ends there: use runs there.
  v1::OwnedAttempt running;
  running.set_attempt_id(f);
  running.set_running(true);
  zone_b = ConnectHello("zone-b", 2, 0, {running}, {{"zone", "b"}}, "local", {"/lustre"});
  EXPECT_TRUE(TakeStarts().empty());
  Exit(zone_b, f, 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "use");
  EXPECT_EQ(GetStage(run, "use").agent_id(), "zone-b");
}

TEST_F(SchedulerTest, InputsOnTwoAgentsThatShareNothingAreNamedInTheReason) {
  uint64_t za = ConnectLabeled("za", 4, 0, {{"zone", "a"}});
  uint64_t zb = ConnectLabeled("zb", 4, 0, {{"zone", "b"}});
  int64_t run = Submit(R"(
name: join
stages:
  a: {run: [prog], node_selector: {zone: a}}
  b: {run: [prog], node_selector: {zone: b}}
  join: {run: [prog], needs: [a, b]}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 2u);
  for (const auto& st : starts) {
    uint64_t session = st.stage() == "a" ? za : zb;
    Events(session, st.attempt_id(),
           {StrCat(R"({"output": {"name": "out", "value": "/data/)", st.stage(), R"("}})")});
    Exit(session, st.attempt_id(), 0);
  }
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_EQ(GetStage(run, "join").reason(),
            "the outputs it needs are on different agents and not under a path they share "
            "(--shared-path): a (/data/a) on za, b (/data/b) on zb");
}

TEST_F(SchedulerTest, AgentsSharedPathsAreListedAndKeptOverARestart) {
  ConnectShared("n1", 4, {"/lustre", "/nfs/home"});
  auto listed = [&] {
    std::vector<std::string> out;
    Batch([&] {
      for (const v1::AgentInfo& a : scheduler_->ListAgents()) {
        for (const std::string& p : a.shared_paths()) out.push_back(StrCat(a.id(), ":", p));
      }
    });
    return out;
  };
  EXPECT_THAT(listed(), ElementsAre("n1:/lustre", "n1:/nfs/home"));
  NewScheduler();
  EXPECT_THAT(listed(), ElementsAre("n1:/lustre", "n1:/nfs/home")) << "before n1 says it again";
}

}  // namespace
}  // namespace longhaul::scheduler

// Maintenance windows (docs/scheduling.md, "Maintenance"): the fit rule alone, and the
// scheduler with a fake clock: a drain at a time keeps off the agent what could not end before
// it, lets short stages start, stops at that time what still runs (queued again, no retry
// spent), survives a restart, and an undrain offers the agent again.
#include "daemon/scheduler/maintenance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kTen = 1'796'464'800'000;  // 2026-12-05T10:00:00Z
constexpr int64_t kHour = 3'600'000;

store::AgentDrainRow DrainAt(int64_t at_ms, std::string reason = "kernel upgrade") {
  store::AgentDrainRow d;
  d.agent_id = "n1";
  d.at_ms = at_ms;
  d.reason = std::move(reason);
  return d;
}

workflow::StageSpec SpecWithTimeout(std::optional<int64_t> timeout_ms, int64_t grace_ms) {
  workflow::StageSpec spec;
  if (timeout_ms) spec.timeout_ms = *timeout_ms;
  spec.grace_ms = grace_ms;
  return spec;
}

TEST(MaintenanceRuleTest, AStageFitsWhenItsTimeoutAndGraceEndBeforeTheDrain) {
  store::AgentDrainRow d = DrainAt(kTen + 4 * kHour);  // 14:00
  workflow::StageSpec fits = SpecWithTimeout(4 * kHour - 10'000, 10'000);
  EXPECT_EQ(AttemptBoundMs(fits), 4 * kHour);
  EXPECT_TRUE(FitsBeforeDrain(d, AttemptBoundMs(fits), kTen)) << "ends exactly at 14:00";
  EXPECT_FALSE(FitsBeforeDrain(d, AttemptBoundMs(fits), kTen + 1)) << "a millisecond late";
  // The grace counts: a timeout that fits alone does not with its SIGTERM grace.
  workflow::StageSpec grace = SpecWithTimeout(4 * kHour, 30'000);
  EXPECT_FALSE(FitsBeforeDrain(d, AttemptBoundMs(grace), kTen));
  // No timeout: no bound, never fits, however soon.
  workflow::StageSpec none = SpecWithTimeout(std::nullopt, 10'000);
  EXPECT_EQ(AttemptBoundMs(none), std::nullopt);
  EXPECT_FALSE(FitsBeforeDrain(d, AttemptBoundMs(none), kTen));
  // Once the time has come nothing fits.
  EXPECT_FALSE(FitsBeforeDrain(d, 1, kTen + 4 * kHour));
}

TEST(MaintenanceRuleTest, WaitReasonsNameTheAgentTheTimeAndWhy) {
  store::AgentDrainRow d = DrainAt(kTen + 4 * kHour);
  EXPECT_EQ(DrainWaitReason(d, SpecWithTimeout(6 * kHour, 10'000), kTen),
            "agent n1 drains at 14:00 UTC (kernel upgrade): this stage's timeout 6h00m does not "
            "fit");
  EXPECT_EQ(DrainWaitReason(d, SpecWithTimeout(std::nullopt, 10'000), kTen),
            "agent n1 drains at 14:00 UTC (kernel upgrade): this stage has no timeout");
  EXPECT_EQ(DrainWaitReason(d, SpecWithTimeout(60'000, 0), kTen + 5 * kHour),
            "agent n1 is drained since 14:00 UTC (kernel upgrade)");
  // Another day: the date too. No reason: no parentheses.
  store::AgentDrainRow tomorrow = DrainAt(kTen + 24 * kHour, "");
  EXPECT_EQ(DrainStopDetail(tomorrow, kTen), "agent n1 drained at 2026-12-06 10:00 UTC");
}

TEST(MaintenanceRuleTest, EachSetOrClearMakesEarlierTimersStale) {
  Maintenance m;
  uint64_t first = m.Set(DrainAt(kTen));
  uint64_t second = m.Set(DrainAt(kTen + kHour));
  EXPECT_NE(first, second);
  EXPECT_EQ(m.Find("n1")->at_ms, kTen + kHour);
  EXPECT_TRUE(m.Clear("n1"));
  EXPECT_NE(m.generation("n1"), second);
  EXPECT_EQ(m.Find("n1"), nullptr);
  EXPECT_FALSE(m.Clear("n1"));
}

class MaintenanceTest : public SchedulerTest {
 protected:
  MaintenanceTest() {
    clock_.SetMs(kTen);
    // The clock jumps by hours here: agents stay connected without heartbeats meanwhile.
    options_.agent_timeout_ms = 24 * kHour;
    options_.lost_after_ms = 48 * kHour;
    NewScheduler();
  }

  void Drain(const std::string& agent, int64_t at_ms, const std::string& reason) {
    Batch([&] {
      Result<v1::AgentInfo> info = scheduler_->SetAgentDrain(agent, at_ms, false, reason, "ada");
      ASSERT_TRUE(info.ok()) << info.status();
      ASSERT_TRUE(info->has_drain());
      EXPECT_EQ(info->drain().by(), "ada");
    });
  }
  void Undrain(const std::string& agent) {
    Batch([&] {
      Result<v1::AgentInfo> info = scheduler_->SetAgentDrain(agent, 0, true, "", "ada");
      ASSERT_TRUE(info.ok()) << info.status();
      EXPECT_FALSE(info->has_drain());
    });
  }
  std::vector<std::string> StartedStages() {
    std::vector<std::string> names;
    for (const v1::StartAttempt& s : TakeStarts()) names.push_back(s.stage());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// One shape (the same resources, any agent), the long ones first in the queue: the short one
// behind them is still offered.
constexpr char kThreeStages[] = R"(name: window
stages:
  long:
    run: [sleep, "1"]
    timeout: 6h
  unbounded:
    run: [sleep, "1"]
  short:
    run: [sleep, "1"]
    timeout: 30m
)";

TEST_F(MaintenanceTest, ADrainAtATimeLetsShortStagesStartAndKeepsLongOnesWaiting) {
  Connect("n1", 8);
  Drain("n1", kTen + 4 * kHour, "kernel upgrade");
  int64_t run = Submit(kThreeStages);
  Batch();
  EXPECT_THAT(StartedStages(), ElementsAre("short"));
  v1::Stage long_stage = GetStage(run, "long");
  EXPECT_EQ(long_stage.status(), v1::STAGE_READY);
  EXPECT_EQ(long_stage.reason(),
            "agent n1 drains at 14:00 UTC (kernel upgrade): this stage's timeout 6h00m does not "
            "fit");
  EXPECT_EQ(GetStage(run, "unbounded").reason(),
            "agent n1 drains at 14:00 UTC (kernel upgrade): this stage has no timeout");
  // The agent shows it.
  std::vector<v1::AgentInfo> agents = scheduler_->ListAgents();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].drain().at_ms(), kTen + 4 * kHour);
  EXPECT_EQ(agents[0].drain().reason(), "kernel upgrade");
  // Undrained: offered again, the waiting ones start.
  Undrain("n1");
  EXPECT_THAT(StartedStages(), ElementsAre("long", "unbounded"));
}

TEST_F(MaintenanceTest, AnotherAgentWithoutADrainTakesTheLongStage) {
  Connect("n1", 8);
  Drain("n1", kTen + 4 * kHour, "kernel upgrade");
  Connect("n2", 1);  // room for one stage
  int64_t run = Submit(R"(name: two
stages:
  long:
    run: [sleep, "1"]
    timeout: 6h
)");
  Batch();
  EXPECT_EQ(TakeStarts().size(), 1u);
  EXPECT_EQ(GetStage(run, "long").agent_id(), "n2");
}

// The drained agent is busy: the long stage names the drain, not the room it waits for, since
// room there would not let it start.
TEST_F(MaintenanceTest, AStageKeptOffABusyDrainedAgentNamesTheDrain) {
  Connect("n1", 1);
  Submit(R"(name: busy
stages:
  short:
    run: [sleep, "1"]
    timeout: 30m
)");
  Batch();
  ASSERT_EQ(TakeStarts().size(), 1u);
  Drain("n1", kTen + 4 * kHour, "kernel upgrade");
  int64_t run = Submit(R"(name: waits
stages:
  long:
    run: [sleep, "1"]
    timeout: 6h
)");
  Batch();
  EXPECT_EQ(GetStage(run, "long").reason(),
            "agent n1 drains at 14:00 UTC (kernel upgrade): this stage's timeout 6h00m does not "
            "fit");
}

// A service (no timeout: it serves until no one needs it) starts only where no drain is due.
TEST_F(MaintenanceTest, AServiceStartsOnAnAgentWithoutADrain) {
  Connect("n1", 8);
  Drain("n1", kTen + 4 * kHour, "kernel upgrade");
  Connect("n2", 8);
  int64_t run = Submit(R"(name: served
stages:
  server:
    kind: service
    run: [serve]
  client:
    needs: [server]
    run: [client, "${server.outputs.endpoint}"]
    timeout: 10m
)");
  Batch();
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "server");
  EXPECT_EQ(GetStage(run, "server").agent_id(), "n2");
}

TEST_F(MaintenanceTest, AtTheDrainsTimeWhatRunsIsStoppedAndQueuedAgainWithNoRetrySpent) {
  uint64_t n1 = Connect("n1", 8);
  int64_t run = Submit(R"(name: stop
stages:
  train:
    run: [sleep, "1"]
    timeout: 6h
    grace: 45s
    resume: true
    retry: {limit: 1}
)");
  Batch();
  std::map<std::string, int64_t> ids = TakeStartedIds();
  ASSERT_EQ(ids.count("train"), 1u);
  Started(n1, ids["train"]);
  Drain("n1", kTen + kHour, "kernel upgrade");
  EXPECT_TRUE(TakeCancels().empty()) << "nothing is stopped before the time";
  clock_.SetMs(kTen + kHour - 1);
  Batch();
  EXPECT_TRUE(TakeCancels().empty());
  clock_.SetMs(kTen + kHour);
  Batch();
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), ids["train"]);
  EXPECT_EQ(cancels[0].reason(), "drain");
  EXPECT_EQ(cancels[0].grace_ms(), 45'000) << "the stage's grace";
  Exit(n1, ids["train"], -1, 15);
  v1::Stage s = GetStage(run, "train");
  EXPECT_EQ(s.status(), v1::STAGE_READY);
  EXPECT_EQ(scheduler_->FindRun(run)->stages[0]->row.retries_used, 0) << "no retry spent";
  EXPECT_EQ(s.reason(), "agent n1 is drained since 11:00 UTC (kernel upgrade)");
  ASSERT_EQ(s.attempts_size(), 1);
  EXPECT_EQ(s.attempts(0).reason(), "drain: agent n1 drained at 11:00 UTC (kernel upgrade)");
  EXPECT_TRUE(TakeStarts().empty());
  // After the undrain it runs again, resuming from its output dir.
  Undrain("n1");
  std::vector<v1::StartAttempt> again = TakeStarts();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempt(), 2);
  EXPECT_TRUE(again[0].resume());
}

TEST_F(MaintenanceTest, TheDrainSurvivesARestartAndStopsWhatRunsWhenItsTimeHasPassed) {
  uint64_t n1 = Connect("n1", 8);
  Submit(R"(name: restart
stages:
  train:
    run: [sleep, "1"]
    timeout: 6h
)");
  Batch();
  std::map<std::string, int64_t> ids = TakeStartedIds();
  Started(n1, ids["train"]);
  Drain("n1", kTen + kHour, "kernel upgrade");
  // longhauld is down over the drain's time.
  clock_.SetMs(kTen + 2 * kHour);
  NewScheduler();
  std::vector<v1::AgentInfo> agents = scheduler_->ListAgents();
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].drain().at_ms(), kTen + kHour);
  EXPECT_EQ(agents[0].drain().by(), "ada");
  uint64_t again = Connect("n1", 8, 0, {[&] {
                             v1::OwnedAttempt o;
                             o.set_attempt_id(ids["train"]);
                             o.set_running(true);
                             return o;
                           }()});
  Batch();
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u) << "the timer armed at recovery fired";
  EXPECT_EQ(cancels[0].reason(), "drain");
  (void)again;
}

TEST_F(MaintenanceTest, BadRequestsAreRefused) {
  Connect("n1", 8);
  Batch([&] {
    Result<v1::AgentInfo> unknown = scheduler_->SetAgentDrain("n9", 0, false, "", "ada");
    EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(unknown.status().message(), HasSubstr("no agent 'n9'"));
    Result<v1::AgentInfo> not_drained = scheduler_->SetAgentDrain("n1", 0, true, "", "ada");
    EXPECT_EQ(not_drained.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(not_drained.status().message(), HasSubstr("agent n1 is not drained"));
  });
}

}  // namespace
}  // namespace longhaul::scheduler

// The scheduler's bookkeeping owners alone: AgentRegistry (agents, sessions, waiting requests)
// and RunTable (runs in memory and their indexes).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "daemon/scheduler/agent_registry.h"
#include "daemon/scheduler/run_table.h"

namespace longhaul::scheduler {
namespace {

TEST(AgentRegistryTest, ANewSessionReplacesTheOldOneWhichThenLeadsNowhere) {
  int64_t next_id = 1;
  AgentRegistry agents(&next_id);
  AgentState* n1 = agents.FindOrAdd("n1", 1000);
  EXPECT_EQ(n1->row.first_seen_ms, 1000);
  EXPECT_EQ(agents.FindOrAdd("n1", 2000), n1) << "an agent known is not made again";
  EXPECT_EQ(agents.Attach(n1, 7), 0u) << "no session to close";
  EXPECT_EQ(agents.BySession(7), n1);
  EXPECT_EQ(agents.Attach(n1, 8), 7u) << "the caller closes the session replaced";
  EXPECT_EQ(agents.BySession(7), nullptr);
  EXPECT_EQ(agents.BySession(8), n1);
  EXPECT_EQ(agents.Detach(7), nullptr) << "the end of a replaced session detaches nothing";
  EXPECT_EQ(n1->session, 8u);
  EXPECT_EQ(agents.Detach(8), n1);
  EXPECT_EQ(n1->session, 0u);
  EXPECT_TRUE(agents.Sessions().empty());
  EXPECT_EQ(agents.Find("n1"), n1) << "a disconnected agent stays known";
  EXPECT_EQ(agents.size(), 1u);
}

TEST(AgentRegistryTest, FailRequestsAnswersOnlyThatAgentsRequestsOfEveryKind) {
  int64_t next_id = 1;
  AgentRegistry agents(&next_id);
  std::vector<std::string> failed;
  agents.logs().Add("n1", [&](Result<v1::LogData>) { failed.push_back("log"); });
  agents.checks().Add("n1", [&](Result<std::vector<std::string>>) { failed.push_back("check"); });
  agents.removals().Add("n2", [&](Result<v1::AttemptsRemoved>) { failed.push_back("n2"); });
  agents.FailRequests("n1", absl::UnavailableError("agent n1 disconnected"));
  EXPECT_EQ(failed, (std::vector<std::string>{"log", "check"}));
  agents.FailAllRequests(absl::UnavailableError("reloaded"));
  EXPECT_EQ(failed.back(), "n2");
  EXPECT_EQ(next_id, 4) << "the ids come from the shared counter";
}

// A run of two stages, the first with a live attempt (id 100).
std::unique_ptr<RunState> RunWithALiveAttempt(int64_t run_id) {
  auto run = std::make_unique<RunState>();
  run->row.id = run_id;
  for (int i = 0; i < 2; ++i) {
    auto st = std::make_unique<StageState>();
    st->row.id = run_id * 10 + i;
    st->run = run.get();
    st->index = i;
    run->stages.push_back(std::move(st));
  }
  auto a = std::make_unique<AttemptState>();
  a->row.id = 100;
  a->stage = run->stages[0].get();
  run->stages[0]->attempts.push_back(std::move(a));
  return run;
}

TEST(RunTableTest, ARunRemovedTakesItsStageAndAttemptEntriesAlong) {
  RunTable runs;
  RunState* r = runs.Add(RunWithALiveAttempt(5));
  AttemptState* a = r->stages[0]->attempts[0].get();
  runs.AddLiveAttempt(a);
  EXPECT_EQ(runs.Find(5), r);
  EXPECT_EQ(runs.StageAt(5, 1), r->stages[1].get());
  EXPECT_EQ(runs.OwnerOfStage(51), r) << "Add indexes the stages the run holds";
  EXPECT_EQ(runs.FindAttempt(100), a);
  runs.RemoveLiveAttempt(100);
  EXPECT_EQ(runs.FindAttempt(100), nullptr) << "ended";
  EXPECT_EQ(runs.FindAnyAttempt(100), a) << "still in its stage until released";
  runs.AddLiveAttempt(a);
  runs.Remove(5);
  EXPECT_EQ(runs.Find(5), nullptr);
  EXPECT_EQ(runs.OwnerOfStage(50), nullptr);
  EXPECT_EQ(runs.OwnerOfStage(51), nullptr);
  EXPECT_EQ(runs.FindAttempt(100), nullptr);
  EXPECT_TRUE(runs.live_attempts().empty());
  runs.Remove(5);  // absent: nothing
  EXPECT_EQ(runs.size(), 0u);
}

TEST(RunTableTest, AStageBuiltAfterItsRunWasAddedIsFoundOnceIndexed) {
  RunTable runs;
  auto empty = std::make_unique<RunState>();
  empty->row.id = 9;
  RunState* r = runs.Add(std::move(empty));
  auto st = std::make_unique<StageState>();
  st->row.id = 90;
  st->run = r;
  EXPECT_EQ(runs.OwnerOfStage(90), nullptr);
  runs.IndexStage(*st);
  r->stages.push_back(std::move(st));
  EXPECT_EQ(runs.OwnerOfStage(90), r);
}

}  // namespace
}  // namespace longhaul::scheduler

// Whole runs on a real cluster: DAG order and outputs, failures that block only their
// dependents, automatic retries. Assertions read the store (GetRun) and the stages' journal.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

class DagTest : public ClusterTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }
  std::string J(const std::vector<std::string>& args) { return JournaledRun(Journal(), args); }
};

TEST_F(DagTest, DiamondRunsEachStageOnceAndPassesOutputsByTemplate) {
  ClusterOptions two_agents;
  two_agents.agents = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(two_agents));
  std::string file = cluster().WriteFile(
      "diamond.yaml",
      "name: diamond\nparams: {word: hello}\nstages:\n" +
          StageYaml("top", J({"--print", "top", "--output", "word=${params.word}"})) +
          StageYaml("left", J({"--output", "side=L-${top.outputs.word}"}), {"top"}) +
          StageYaml("right", J({"--output", "side=R-${top.outputs.word}"}), {"top"}) +
          StageYaml("join",
                    J({"--print", "got ${left.outputs.side} and ${right.outputs.side}", "--output",
                       "both=${left.outputs.side}+${right.outputs.side}"}),
                    {"left", "right"}));
  CommandResult submit = cluster().Cli({"submit", file, "--set", "word=hi there"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t id = std::stoll(submit.out);
  Result<v1::Run> run = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);

  for (const char* name : {"top", "left", "right", "join"}) {
    const v1::Stage* s = FindStage(*run, name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(s->status(), v1::STAGE_SUCCEEDED) << name;
    EXPECT_EQ(s->attempt_count(), 1) << name;
    ASSERT_EQ(s->attempts_size(), 1) << name;
    EXPECT_EQ(s->attempts(0).state(), v1::ATTEMPT_EXITED) << name;
    EXPECT_EQ(s->attempts(0).exit_code(), 0) << name;
  }
  // The processes: one each, top first and join last.
  std::vector<std::string> lines = JournalLines(Journal());
  ASSERT_EQ(lines.size(), 4u) << StrJoin(lines, "\n");
  EXPECT_EQ(lines.front(), "top 1");
  EXPECT_EQ(lines.back(), "join 1");
  std::map<std::string, int> counts = JournalCounts(Journal());
  EXPECT_EQ(counts,
            (std::map<std::string, int>{{"top", 1}, {"left", 1}, {"right", 1}, {"join", 1}}));

  // Outputs went through templates as single argv elements, spaces and all.
  EXPECT_EQ(FindStage(*run, "top")->outputs().at("word"), "hi there");
  EXPECT_EQ(FindStage(*run, "left")->outputs().at("side"), "L-hi there");
  EXPECT_EQ(FindStage(*run, "join")->outputs().at("both"), "L-hi there+R-hi there");
  const v1::Attempt& join = FindStage(*run, "join")->attempts(0);
  EXPECT_NE(std::find(join.argv().begin(), join.argv().end(), "got L-hi there and R-hi there"),
            join.argv().end());
  // Dependents started only after what they need had ended.
  const v1::Attempt& top = FindStage(*run, "top")->attempts(0);
  for (const char* name : {"left", "right"}) {
    EXPECT_GE(FindStage(*run, name)->attempts(0).started_at_ms(), top.ended_at_ms()) << name;
    EXPECT_GE(join.started_at_ms(), FindStage(*run, name)->attempts(0).ended_at_ms()) << name;
  }
}

TEST_F(DagTest, FailingStageSkipsOnlyItsDependents) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  Result<int64_t> id = cluster().Submit(
      "name: partial\nstages:\n" + StageYaml("bad", J({"--exit", "3"})) +
      StageYaml("bad_child", J({}), {"bad"}) + StageYaml("bad_grandchild", J({}), {"bad_child"}) +
      StageYaml("good", J({"--sleep", "0.3"})) + StageYaml("good_child", J({}), {"good"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_FAILED) << DescribeRun(*run);
  EXPECT_NE(run->reason().find("bad"), std::string::npos) << run->reason();

  const v1::Stage* bad = FindStage(*run, "bad");
  EXPECT_EQ(bad->status(), v1::STAGE_FAILED);
  EXPECT_EQ(bad->reason(), "exit 3");
  ASSERT_EQ(bad->attempts_size(), 1);
  EXPECT_EQ(bad->attempts(0).exit_code(), 3);
  for (const char* name : {"bad_child", "bad_grandchild"}) {
    EXPECT_EQ(FindStage(*run, name)->status(), v1::STAGE_SKIPPED) << name;
    EXPECT_EQ(FindStage(*run, name)->attempts_size(), 0) << name;
  }
  for (const char* name : {"good", "good_child"}) {
    EXPECT_EQ(FindStage(*run, name)->status(), v1::STAGE_SUCCEEDED) << name;
  }
  EXPECT_EQ(JournalCounts(Journal()),
            (std::map<std::string, int>{{"bad", 1}, {"good", 1}, {"good_child", 1}}));
}

TEST_F(DagTest, FlakyStageSucceedsOnItsThirdAttempt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  Result<int64_t> id =
      cluster().Submit("name: flaky\nstages:\n" + StageYaml("flaky", J({"--fail-first", "2"}), {},
                                                            {"retry: {limit: 2, backoff: 100ms}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Stage* s = FindStage(*run, "flaky");
  EXPECT_EQ(s->attempt_count(), 3);
  ASSERT_EQ(s->attempts_size(), 3);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(s->attempts(i).number(), i + 1);
    EXPECT_EQ(s->attempts(i).state(), v1::ATTEMPT_EXITED);
    EXPECT_EQ(s->attempts(i).exit_code(), 1);
    EXPECT_EQ(s->attempts(i).reason(), "exit 1");
  }
  EXPECT_EQ(s->attempts(2).exit_code(), 0);
  // Backoff n is backoff * 2^(n-1) with equal jitter: never under half of it.
  EXPECT_GE(s->attempts(1).created_at_ms() - s->attempts(0).ended_at_ms(), 50);
  EXPECT_GE(s->attempts(2).created_at_ms() - s->attempts(1).ended_at_ms(), 100);
  EXPECT_EQ(JournalLines(Journal()), (std::vector<std::string>{"flaky 1", "flaky 2", "flaky 3"}));
}

TEST_F(DagTest, StageFailsOnceItsRetriesAreSpent) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  Result<int64_t> id = cluster().Submit("name: flaky\nstages:\n" +
                                        StageYaml("flaky", J({"--fail-first", "2", "--exit", "7"}),
                                                  {}, {"retry: {limit: 1, backoff: 50ms}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_FAILED);
  const v1::Stage* s = FindStage(*run, "flaky");
  EXPECT_EQ(s->status(), v1::STAGE_FAILED);
  EXPECT_EQ(s->attempts_size(), 2);
  EXPECT_EQ(s->reason(), "exit 7 (after 1 retries)");
  EXPECT_EQ(JournalCounts(Journal())["flaky"], 2);
}

}  // namespace
}  // namespace longhaul::testing

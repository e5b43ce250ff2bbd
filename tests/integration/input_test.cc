// Bad input from users and workflows: a broken file is refused with its position and stores
// nothing; a stage program that does not exist fails its attempt, not the agent.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

class InputTest : public ClusterTest {};

constexpr char kMisspelledKey[] =
    "name: broken\n"
    "stages:\n"
    "  a:\n"
    "    run: [lh-testjob]\n"
    "  b:\n"
    "    neds: [a]\n"
    "    run: [lh-testjob]\n";

constexpr char kBadYaml[] =
    "name: broken\n"
    "stages:\n"
    "  a:\n"
    "    run: [lh-testjob, --print, 'x'\n";

TEST_F(InputTest, BrokenWorkflowIsRefusedWithLineAndColumnAndNothingIsStored) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string key = cluster().WriteFile("key.yaml", kMisspelledKey);
  std::string yaml = cluster().WriteFile("yaml.yaml", kBadYaml);
  std::string expected = StrCat(key, ":6:5: unknown key 'neds' in stage 'b'");
  for (const char* cmd : {"validate", "submit"}) {
    CommandResult r = cluster().Cli({cmd, key});
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("did you mean 'needs'?"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_EQ(r.out, "") << cmd;

    r = cluster().Cli({cmd, yaml});
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out << r.err;
    EXPECT_TRUE(StartsWith(r.err, StrCat(yaml, ":"))) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("invalid YAML"), std::string::npos) << cmd << ": " << r.err;
  }
  // The coordinator refuses it too when a client skips the CLI's own check.
  Result<int64_t> direct = cluster().Submit(kMisspelledKey);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ToStd(direct.status().message()).find("<test>:6:5: unknown key 'neds'"),
            std::string::npos)
      << direct.status().message();

  Result<v1::ListRunsResponse> runs = cluster().ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(runs->runs_size(), 0);
  CommandResult list = cluster().Cli({"runs"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "");
  EXPECT_EQ(list.err, "no runs\n");
}

TEST_F(InputTest, MissingProgramFailsTheAttemptAndTheAgentKeepsWorking) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  pid_t agent = cluster().agent_pid(0);
  Result<int64_t> id = cluster().Submit(
      "name: missing\n"
      "stages:\n"
      "  ghost:\n"
      "    run: [lh-no-such-program, --flag]\n");
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_FAILED);
  const v1::Stage* ghost = FindStage(*run, "ghost");
  EXPECT_EQ(ghost->status(), v1::STAGE_FAILED);
  ASSERT_EQ(ghost->attempts_size(), 1);
  EXPECT_EQ(ghost->attempts(0).exit_code(), 127);
  EXPECT_NE(ghost->attempts(0).reason().find("not found: lh-no-such-program"), std::string::npos)
      << ghost->attempts(0).reason();
  EXPECT_NE(ghost->reason().find("not found: lh-no-such-program"), std::string::npos)
      << ghost->reason();

  // Same agent process, still connected, runs the next run's stage.
  EXPECT_TRUE(cluster().AgentRunning(0));
  EXPECT_EQ(cluster().agent_pid(0), agent);
  Result<int64_t> next = cluster().Submit(
      "name: after\n"
      "stages:\n"
      "  fine:\n"
      "    run: [lh-testjob, --print, ok]\n");
  ASSERT_TRUE(next.ok()) << next.status().message();
  Result<v1::Run> after = cluster().WaitForRunEnd(*next);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->status(), v1::RUN_SUCCEEDED) << DescribeRun(*after);
  EXPECT_EQ(FindStage(*after, "fine")->agent_id(), cluster().AgentId(0));
}

}  // namespace
}  // namespace longhaul::testing

// The harness itself: daemons come up, restart on the same port and state, and the SIGSTOP
// helpers really stop them. Fault tests rely on each of these.
#include "tests/integration/cluster.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::testing {
namespace {

class ClusterHarnessTest : public ClusterTest {};

v1::AgentInfo AgentInfoOf(Cluster& c, const std::string& id) {
  auto agents = c.ListAgents();
  EXPECT_TRUE(agents.ok()) << agents.status().message();
  if (agents.ok()) {
    for (const auto& a : *agents) {
      if (a.id() == id) return a;
    }
  }
  return {};
}

TEST_F(ClusterHarnessTest, StartsCoordinatorAndEveryAgent) {
  ClusterOptions options;
  options.agents = 2;
  options.cpus = 3;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  for (int i = 0; i < 2; ++i) {
    v1::AgentInfo a = AgentInfoOf(cluster(), cluster().AgentId(i));
    EXPECT_EQ(a.state(), v1::AGENT_CONNECTED) << cluster().AgentId(i);
    EXPECT_EQ(a.total().cpus(), 3);
  }
  CommandResult r = cluster().Cli({"agents"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("n0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("n1"), std::string::npos) << r.out;
}

TEST_F(ClusterHarnessTest, CoordinatorComesBackOnTheSamePortAndAgentsReconnect) {
  ClusterOptions options;
  options.agents = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  std::string addr = cluster().address();
  pid_t first = cluster().coordinator_pid();
  cluster().KillCoordinator(SIGKILL);
  EXPECT_FALSE(cluster().CoordinatorRunning());
  Status st = cluster().RestartCoordinator();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(cluster().address(), addr);
  EXPECT_NE(cluster().coordinator_pid(), first);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(AgentInfoOf(cluster(), cluster().AgentId(i)).state(), v1::AGENT_CONNECTED);
  }
}

TEST_F(ClusterHarnessTest, AgentRestartKeepsItsIdAndStateDir) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  int64_t connected = AgentInfoOf(cluster(), "n0").connected_at_ms();
  cluster().KillAgent(0, SIGKILL);
  EXPECT_FALSE(cluster().AgentRunning(0));
  Status st = cluster().RestartAgent(0);
  ASSERT_TRUE(st.ok()) << st.message();
  v1::AgentInfo a = AgentInfoOf(cluster(), "n0");
  EXPECT_EQ(a.state(), v1::AGENT_CONNECTED);
  EXPECT_GT(a.connected_at_ms(), connected);
  EXPECT_EQ(ReadTextFile(cluster().AgentStateDir(0) + "/agent_id").substr(0, 2), "n0");
}

TEST_F(ClusterHarnessTest, SuspendedAgentGoesUnreachableAndComesBackWhenResumed) {
  ClusterOptions options;
  options.agent_timeout = "1s";
  options.lost_after = "30s";
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  cluster().SuspendAgent(0);
  EXPECT_TRUE(WaitFor([&] { return AgentInfoOf(cluster(), "n0").state() == v1::AGENT_UNREACHABLE; },
                      10'000))
      << AgentStateName(AgentInfoOf(cluster(), "n0").state());
  cluster().ResumeAgent(0);
  EXPECT_TRUE(
      WaitFor([&] { return AgentInfoOf(cluster(), "n0").state() == v1::AGENT_CONNECTED; }, 10'000));
}

TEST_F(ClusterHarnessTest, CoordinatorRestartDoesNotWaitForASuspendedAgent) {
  ClusterOptions options;
  options.agents = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  cluster().SuspendAgent(1);
  Status st = cluster().RestartCoordinator();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(AgentInfoOf(cluster(), "n0").state(), v1::AGENT_CONNECTED);
  int64_t before = AgentInfoOf(cluster(), "n1").connected_at_ms();
  cluster().ResumeAgent(1);
  st = cluster().WaitAgentConnected(1, before);
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST_F(ClusterHarnessTest, WaitForRunReportsWhatItLastSaw) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  Result<int64_t> id =
      cluster().Submit("name: t\nstages:\n  only:\n    run: [lh-testjob, --sleep, '30']\n");
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRun(
      *id, [](const v1::Run& r) { return r.status() == v1::RUN_SUCCEEDED; }, 300);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(ToStd(run.status().message()).find("only: "), std::string::npos)
      << run.status().message();
}

TEST_F(ClusterHarnessTest, DestructorKillsStagesLeftRunning) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  Result<int64_t> id =
      cluster().Submit("name: t\nstages:\n  only:\n    run: [lh-testjob, --sleep, '60']\n");
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRun(*id, [](const v1::Run& r) {
    return r.stages_size() == 1 && r.stages(0).attempts_size() == 1 &&
           r.stages(0).attempts(0).pid() > 0;
  });
  ASSERT_TRUE(run.ok()) << run.status().message();
  pid_t stage = static_cast<pid_t>(run->stages(0).attempts(0).pid());
  ASSERT_TRUE(ProcessAlive(stage));
  Result<std::string> check = cluster().IntegrityCheck();
  ASSERT_TRUE(check.ok()) << check.status().message();
  EXPECT_EQ(*check, "ok");
  cluster_.reset();
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(stage); }, 5'000));
}

}  // namespace
}  // namespace longhaul::testing

// One agent per id, on real daemons: a second longhaul-agent started with the id of a live one
// is refused (ALREADY_EXISTS), exits non-zero with the coordinator's message, and leaves the
// first agent's attempt alone; an agent whose earlier connection went silent (its process
// stopped, the stream half-open) is let in once the coordinator takes that session as gone.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

// A longhaul-agent claiming `id` with its own state dir `dir_name`, dialing the cluster.
std::vector<std::string> SecondAgentArgv(Cluster& cluster, const std::string& id,
                                         const std::string& dir_name) {
  return {BinPath("longhaul-agent"),
          "--config",
          "/dev/null",
          "--coordinator",
          cluster.address(),
          "--state-dir",
          cluster.dir().Join(dir_name),
          "--id",
          id,
          "--cpus",
          "2",
          "--heartbeat",
          "200ms",
          "--log-level",
          "debug"};
}

int CountOf(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// With a stage: FaultTest checks its events after the test.
using DuplicateAgentTest = FaultTest;
// Without one.
using SilentAgentTest = ClusterTest;

TEST_F(DuplicateAgentTest, SecondAgentWithTheSameIdIsRefusedAndTheFirstFinishesItsAttempt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions(1)));
  Result<std::vector<v1::AgentInfo>> before = cluster().ListAgents();
  ASSERT_TRUE(before.ok() && before->size() == 1u);
  std::string gate = cluster().dir().Join("gate");
  std::string journal = cluster().dir().Join("journal.txt");
  // The stage runs until the test opens the gate: it is running all the while the second
  // agent knocks.
  Result<int64_t> id = cluster().Submit(
      "name: dup\nstages:\n" +
      StageYaml("hold", JournaledScript(journal, "while [ ! -e " + gate +
                                                     " ]; do sleep 0.05; done; echo held")));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> running = cluster().WaitForRun(*id, [](const v1::Run& r) {
    const v1::Attempt* a = FindAttempt(r, "hold", 1);
    return a != nullptr && a->state() == v1::ATTEMPT_RUNNING;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();

  // Refused for as long as a restarted agent would be let in (agent timeout 1 s plus its
  // dialing margin), then it gives up.
  CommandResult second =
      RunCommand(SecondAgentArgv(cluster(), cluster().AgentId(0), "second"), {}, 60'000);
  EXPECT_NE(second.exit_code, 0) << second.err;
  EXPECT_NE(second.exit_code, 128 + SIGKILL) << "it did not give up by itself: " << second.err;
  std::string refusal = StrCat("agent id '", cluster().AgentId(0), "' is already connected from ");
  EXPECT_NE(second.err.find("longhaul-agent: " + refusal + "127.0.0.1:"), std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("in case that is this agent's own earlier connection"),
            std::string::npos)
      << second.err;

  // The coordinator logged the duplicate once, though it was refused on every dial.
  std::string coordinator_log = ReadTextFile(cluster().dir().Join("logs/longhauld.log"));
  EXPECT_EQ(CountOf(coordinator_log, " W [rpc] refused a second agent from"), 1) << coordinator_log;
  EXPECT_GE(CountOf(coordinator_log, refusal), 2) << "dialed once only?";
  EXPECT_EQ(CountOf(coordinator_log, "lost: agent"), 0);

  // The first agent never lost its session and its attempt finishes as the only one.
  Result<std::vector<v1::AgentInfo>> agents = cluster().ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status().message();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ(agents->at(0).state(), v1::AGENT_CONNECTED);
  EXPECT_EQ(agents->at(0).connected_at_ms(), before->at(0).connected_at_ms())
      << "the first agent reconnected: its session was replaced";
  WriteTextFile(gate, "");
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 30'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  EXPECT_EQ(FindStage(*run, "hold")->attempts_size(), 1) << DescribeRun(*run);
  EXPECT_EQ(JournalCounts(journal)["hold"], 1);
}

TEST_F(SilentAgentTest, AgentWhoseEarlierConnectionWentSilentIsLetIn) {
  ClusterOptions options;
  options.agent_timeout = "1s";
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  Result<std::vector<v1::AgentInfo>> before = cluster().ListAgents();
  ASSERT_TRUE(before.ok() && before->size() == 1u);
  int64_t first_connected = before->at(0).connected_at_ms();
  // The first agent stops answering with its stream still open: as a host that vanished, or
  // the old connection of an agent restarted elsewhere, which nobody has closed.
  cluster().SuspendAgent(0);
  std::string log = cluster().dir().Join("logs/replacement.log");
  Result<std::unique_ptr<Subprocess>> replacement =
      Subprocess::Start(SecondAgentArgv(cluster(), cluster().AgentId(0), "replacement"), {}, log);
  ASSERT_TRUE(replacement.ok()) << replacement.status().message();
  EXPECT_TRUE(WaitFor(
      [&] {
        Result<std::vector<v1::AgentInfo>> a = cluster().ListAgents();
        return a.ok() && a->size() == 1u && a->at(0).state() == v1::AGENT_CONNECTED &&
               a->at(0).connected_at_ms() > first_connected;
      },
      20'000))
      << ReadTextFile(log);
  EXPECT_TRUE((*replacement)->Running()) << ReadTextFile(log);
  std::string coordinator_log = ReadTextFile(cluster().dir().Join("logs/longhauld.log"));
  EXPECT_NE(coordinator_log.find("; the connection from 127.0.0.1:"), std::string::npos)
      << coordinator_log;
  // The old process, woken, is the duplicate now: refused, it exits by itself.
  cluster().ResumeAgent(0);
  EXPECT_TRUE(WaitFor([&] { return !cluster().AgentRunning(0); }, 30'000));
  EXPECT_TRUE((*replacement)->Running());
}

}  // namespace
}  // namespace longhaul::testing

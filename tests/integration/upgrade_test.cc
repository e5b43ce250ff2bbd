// Upgrading under a running stage: longhauld and the agent replaced by other copies of the
// binaries (SIGTERM, start the new ones on the same state), and the agent protocol version
// that tells a coordinator which agents it can serve.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "absl/strings/ascii.h"
#include "core/strings.h"
#include "longhaul/v1/agent.grpc.pb.h"
#include "proto/agent_protocol.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

namespace fs = std::filesystem;

class UpgradeTest : public FaultTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }

  // Copies the daemons, the shim and the stage binary the test runs into `dir`.
  std::string CopyBinaries(const std::string& dir) {
    fs::create_directories(dir);
    for (const char* name : {"longhauld", "longhaul-agent", "longhaul-shim", "lh-testjob"}) {
      fs::copy_file(BinPath(name), dir + "/" + name);
    }
    return dir;
  }
};

TEST_F(UpgradeTest, DaemonsReplacedWhileAStageRunsRecordItOnce) {
  TempDir bins;
  std::string old_dir = CopyBinaries(bins.Join("old"));
  std::string new_dir = CopyBinaries(bins.Join("new"));
  ClusterOptions options = FaultOptions(1, "20s");
  options.bin_dir = old_dir;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  Result<int64_t> id = cluster().Submit(
      "name: upgrade\nstages:\n" +
      StageYaml("long", JournaledRun(Journal(), {"--progress", "30", "--sleep", "6"})));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> running = cluster().WaitForRun(*id, [](const v1::Run& r) {
    const v1::Attempt* a = FindAttempt(r, "long", 1);
    return a != nullptr && a->state() == v1::ATTEMPT_RUNNING && a->pid() > 0;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();
  int64_t pid = FindAttempt(*running, "long", 1)->pid();
  EXPECT_EQ(fs::read_symlink(StrCat("/proc/", cluster().agent_pid(0), "/exe")).string(),
            old_dir + "/longhaul-agent");

  // The order docs/operations.md gives: the coordinator, then the agents.
  cluster().KillCoordinator(SIGTERM);
  cluster().KillAgent(0, SIGTERM);
  EXPECT_TRUE(ProcessAlive(static_cast<pid_t>(pid))) << "the stage stopped with its agent";
  cluster().set_bin_dir(new_dir);
  Status st = cluster().RestartCoordinator();
  ASSERT_TRUE(st.ok()) << st.message();
  st = cluster().RestartAgent(0);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(fs::read_symlink(StrCat("/proc/", cluster().coordinator_pid(), "/exe")).string(),
            new_dir + "/longhauld");
  EXPECT_EQ(fs::read_symlink(StrCat("/proc/", cluster().agent_pid(0), "/exe")).string(),
            new_dir + "/longhaul-agent");

  Result<v1::Run> end = cluster().WaitForRunEnd(*id, 60'000);
  ASSERT_TRUE(end.ok()) << end.status().message();
  ASSERT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
  const v1::Stage* s = FindStage(*end, "long");
  ASSERT_EQ(s->attempts_size(), 1) << DescribeRun(*end);
  EXPECT_EQ(s->attempt_count(), 1);
  EXPECT_EQ(s->attempts(0).state(), v1::ATTEMPT_EXITED);
  EXPECT_EQ(s->attempts(0).exit_code(), 0);
  EXPECT_EQ(s->attempts(0).pid(), pid);
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"long", 1}}));
  // One exit in the store for the attempt (FaultTest's TearDown checks the events).
  Result<std::string> exits = cluster().Query(
      StrCat("SELECT COUNT(*) FROM attempts WHERE run_id = ", *id, " AND ended_at_ms IS NOT NULL"));
  ASSERT_TRUE(exits.ok()) << exits.status().message();
  EXPECT_EQ(absl::StripAsciiWhitespace(*exits), "1");
}

// A raw agent stream to the cluster's longhauld: sends a Hello of `version` and returns the
// stream's first answer (a Welcome) or its final status.
struct HelloOutcome {
  bool welcomed = false;
  int welcome_version = -1;
  grpc::Status status;
};
HelloOutcome SayHello(const std::string& address, const std::string& agent_id, int version) {
  auto stub =
      v1::AgentService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = stub->Connect(&ctx);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id(agent_id);
  hello.mutable_hello()->set_hostname("test");
  hello.mutable_hello()->set_executor("local");
  if (version != 0) hello.mutable_hello()->set_protocol_version(version);
  HelloOutcome out;
  stream->Write(hello);
  v1::CoordinatorMessage msg;
  while (stream->Read(&msg)) {
    if (msg.has_welcome()) {
      out.welcomed = true;
      out.welcome_version = msg.welcome().protocol_version();
      ctx.TryCancel();
      break;
    }
  }
  out.status = stream->Finish();
  return out;
}

TEST_F(UpgradeTest, CoordinatorRefusesATooNewAgentProtocolAndAcceptsAnOlderAgent) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions(1)));
  HelloOutcome future = SayHello(cluster().address(), "future", kAgentProtocolVersion + 1);
  EXPECT_FALSE(future.welcomed);
  EXPECT_EQ(future.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(future.status.error_message().find(
                StrCat("speaks agent protocol version ", kAgentProtocolVersion + 1,
                       " but this longhauld speaks version ", kAgentProtocolVersion)),
            std::string::npos)
      << future.status.error_message();
  Result<std::vector<v1::AgentInfo>> agents = cluster().ListAgents();
  ASSERT_TRUE(agents.ok());
  for (const v1::AgentInfo& a : *agents) EXPECT_NE(a.id(), "future") << "a refused agent is listed";

  // No version at all: an agent built before the field, which speaks version 1.
  HelloOutcome old = SayHello(cluster().address(), "old", 0);
  EXPECT_TRUE(old.welcomed) << old.status.error_message();
  EXPECT_EQ(old.welcome_version, kAgentProtocolVersion);
  HelloOutcome current = SayHello(cluster().address(), "current", kAgentProtocolVersion);
  EXPECT_TRUE(current.welcomed) << current.status.error_message();
  // The harness's own agent (the real binary) says the current version and runs a stage.
  Result<int64_t> id = cluster().Submit("name: v\nstages:\n" +
                                        StageYaml("s", JournaledRun(Journal(), {"--print", "x"})));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> end = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
}

}  // namespace
}  // namespace longhaul::testing

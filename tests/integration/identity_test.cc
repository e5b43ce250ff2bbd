// The store's identity on real daemons (docs/coordinator.md, "Identity"): a database file
// removed under a running longhauld stops it taking work, with an error naming the file; a
// store restored from a backup gives out no attempt id an agent already used and overwrites no
// attempt's record; an agent refuses the coordinator of another cluster, naming both ids.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <regex>

#include "core/fs.h"
#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

class IdentityTest : public ClusterTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }

  // Submits a run of `stages` quick stages and waits for it to succeed.
  Result<v1::Run> RunToSuccess(const std::string& name, int stages) {
    std::string yaml = StrCat("name: ", name, "\nstages:\n");
    for (int i = 0; i < stages; ++i) {
      yaml += StageYaml(StrCat("s", i), JournaledRun(Journal(), {"--print", name}));
    }
    ASSIGN_OR_RETURN(int64_t id, cluster().Submit(yaml));
    ASSIGN_OR_RETURN(v1::Run run, cluster().WaitForRunEnd(id, 60'000));
    if (run.status() != v1::RUN_SUCCEEDED) {
      return absl::InternalError(StrCat("run ", name, " did not succeed: ", DescribeRun(run)));
    }
    return run;
  }

  // The text of every file of the agent's attempt directories, by path.
  std::map<std::string, std::string> AttemptRecords(int agent) {
    std::map<std::string, std::string> out;
    std::string root = cluster().AgentStateDir(agent) + "/attempts";
    for (const auto& dir : std::filesystem::directory_iterator(root)) {
      for (const char* name : {"exit.json", "spec.json", "pid.json"}) {
        std::string path = dir.path().string() + "/" + name;
        Result<std::string> text = ReadFile(path);
        if (text.ok()) out[path] = *text;
      }
    }
    return out;
  }
};

std::string ClusterIdOf(const std::string& agent_state_dir) {
  Result<std::string> text = ReadFile(agent_state_dir + "/cluster_id");
  if (!text.ok()) return "";
  return std::string(StrSplit(*text, '\n')[0]);
}

TEST_F(IdentityTest, ARemovedDatabaseStopsSubmitsWithAnErrorNamingIt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  ASSERT_TRUE(RunToSuccess("before", 1).ok());
  std::string backup = cluster().dir().Join("backup.db");
  CommandResult made = cluster().Cli({"admin", "backup", backup});
  ASSERT_EQ(made.exit_code, 0) << (made.out + made.err);
  std::string db = cluster().db_path();
  ASSERT_TRUE(std::filesystem::remove(db));

  // Refused, through the API and the CLI, with the file named; nothing is accepted.
  std::string yaml = StrCat("name: after\nstages:\n", StageYaml("s", JournaledRun(Journal(), {})));
  for (int i = 0; i < 3; ++i) {
    Result<int64_t> id = cluster().Submit(yaml);
    ASSERT_FALSE(id.ok()) << "run " << *id << " was accepted into a removed database";
    EXPECT_NE(id.status().message().find(StrCat("the database file ", db, " was removed")),
              std::string::npos)
        << id.status();
  }
  CommandResult cli = cluster().Cli({"submit", cluster().WriteFile("after.yaml", yaml)});
  EXPECT_NE(cli.exit_code, 0) << cli.out;
  EXPECT_NE(cli.err.find(StrCat(db, " was removed")), std::string::npos) << cli.err;
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"s0", 1}}));
  EXPECT_FALSE(std::filesystem::exists(db)) << "longhauld made a new file under the old name";
  Result<HttpResult> ready = HttpGet(cluster().http_address(), "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 503);
  EXPECT_NE(ready->body.find(StrCat(db, " was removed")), std::string::npos) << ready->body;

  // Logged once, however many calls it refused.
  std::string log =
      ReadFile(cluster().coordinator_state_dir() + "/../logs/longhauld.log").value_or("");
  std::regex line("E \\[store\\] the database file .* was removed while longhauld");
  auto n =
      std::distance(std::sregex_iterator(log.begin(), log.end(), line), std::sregex_iterator());
  EXPECT_EQ(n, 1) << log;

  // The operator puts the database back: the history is there and work goes on.
  Status restored = cluster().RestoreCoordinatorFrom(backup);
  ASSERT_TRUE(restored.ok()) << restored.message();
  Result<v1::ListRunsResponse> runs = cluster().ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->runs_size(), 1);
  EXPECT_EQ(runs->runs(0).workflow_name(), "before");
  ASSERT_TRUE(RunToSuccess("again", 1).ok());
}

TEST_F(IdentityTest, AfterARestoreNoAttemptIdIsReusedAndNoRecordOverwritten) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  Result<v1::Run> first = RunToSuccess("first", 1);
  ASSERT_TRUE(first.ok()) << first.status();
  std::string backup = cluster().dir().Join("backup.db");
  CommandResult made = cluster().Cli({"admin", "backup", backup});
  ASSERT_EQ(made.exit_code, 0) << (made.out + made.err);
  // Attempts the backup does not know, whose exits were acknowledged: the restored store will
  // not hear of them again.
  Result<v1::Run> second = RunToSuccess("second", 3);
  ASSERT_TRUE(second.ok()) << second.status();
  int64_t highest = 0;
  for (const v1::Stage& s : second->stages()) {
    for (const v1::Attempt& a : s.attempts()) highest = std::max(highest, a.id());
  }
  std::map<std::string, std::string> records = AttemptRecords(0);
  std::string cluster_id = ClusterIdOf(cluster().AgentStateDir(0));
  ASSERT_EQ(cluster_id.size(), 32u);

  Status restored = cluster().RestoreCoordinatorFrom(backup);
  ASSERT_TRUE(restored.ok()) << restored.message();
  Result<v1::Run> third = RunToSuccess("third", 3);
  ASSERT_TRUE(third.ok()) << third.status() << "\n" << cluster().Logs();
  for (const v1::Stage& s : third->stages()) {
    ASSERT_EQ(s.attempts_size(), 1) << DescribeRun(*third);
    EXPECT_GT(s.attempts(0).id(), highest) << "attempt id reused after the restore";
  }
  // Every record of the attempts the restored store forgot is as it was.
  std::map<std::string, std::string> after = AttemptRecords(0);
  for (const auto& [path, text] : records) EXPECT_EQ(after[path], text) << path;
  EXPECT_EQ(ClusterIdOf(cluster().AgentStateDir(0)), cluster_id) << "a backup keeps the cluster";
  std::string logs = cluster().Logs(1 << 20);
  EXPECT_NE(logs.find("is a backup copy"), std::string::npos) << logs;
  EXPECT_NE(logs.find("the coordinator's store is a restored copy of cluster " + cluster_id),
            std::string::npos)
      << logs;
}

TEST_F(IdentityTest, AnAgentRefusesAnotherClustersCoordinatorUntilNewCluster) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  ASSERT_TRUE(RunToSuccess("before", 1).ok());
  std::string old_id = ClusterIdOf(cluster().AgentStateDir(0));
  ASSERT_EQ(old_id.size(), 32u);

  // The store is lost: longhauld starts on a new, empty one (another cluster).
  cluster().KillAgent(0, SIGTERM);
  cluster().KillCoordinator(SIGTERM);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(cluster().db_path() + suffix);
  }
  ASSERT_TRUE(cluster().RestartCoordinator().ok());
  ASSERT_TRUE(cluster().RestartAgent(0, /*wait_connected=*/false).ok());
  std::optional<int> status = cluster().WaitAgentExit(0, 20'000);
  ASSERT_TRUE(status.has_value()) << "the agent serves a coordinator of another cluster\n"
                                  << cluster().Logs();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0) << "wait status " << *status;
  std::string agent_log = cluster().AgentLog(0);
  std::string new_id(
      StripWhitespace(cluster().Query("SELECT cluster_id FROM identity").value_or("")));
  ASSERT_EQ(new_id.size(), 32u);
  EXPECT_NE(new_id, old_id);
  EXPECT_NE(agent_log.find(StrCat("serves cluster ", old_id)), std::string::npos) << agent_log;
  EXPECT_NE(agent_log.find(StrCat("is cluster ", new_id)), std::string::npos) << agent_log;
  EXPECT_EQ(ClusterIdOf(cluster().AgentStateDir(0)), old_id);
  Result<std::vector<v1::AgentInfo>> agents = cluster().ListAgents();
  ASSERT_TRUE(agents.ok());
  EXPECT_TRUE(agents->empty()) << "the refused agent was registered";

  // --new-cluster: the agent is taken over and works for the new store.
  cluster().set_coordinator_flags({"--new-cluster"});
  ASSERT_TRUE(cluster().RestartCoordinator().ok());
  ASSERT_TRUE(cluster().RestartAgent(0).ok()) << cluster().Logs();
  Result<v1::Run> run = RunToSuccess("after", 2);
  ASSERT_TRUE(run.ok()) << run.status() << "\n" << cluster().Logs();
  EXPECT_EQ(ClusterIdOf(cluster().AgentStateDir(0)), new_id);
}

}  // namespace
}  // namespace longhaul::testing

// Runs say what they ran on, on real daemons: a run submitted from a dirty git work tree records
// its commit and diff; an engine upgraded between two runs (a profile whose version_command
// reads a file the test changes, asked again when the agent restarts) shows first in
// `longhaul compare`, and with `cache: {key_on: [engine_version]}` the second run runs the
// server and its dependent again but reuses data generation.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/command.h"
#include "core/hash.h"
#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/testing/git_repo.h"

namespace longhaul::testing {
namespace {

class ProvenanceTest : public ClusterTest {
 protected:
  std::string Git(const std::string& repo, const std::vector<std::string>& args) {
    return RunGitInRepo(repo, args);
  }
};

const v1::AttemptEnvironment* LastEnv(const v1::Stage* s) {
  for (int i = s == nullptr ? -1 : s->attempts_size() - 1; i >= 0; --i) {
    if (s->attempts(i).has_environment()) return &s->attempts(i).environment();
  }
  return nullptr;
}

TEST_F(ProvenanceTest, DirtyTreeAndEngineUpgradeAreRecordedComparedAndRerunWhereAsked) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  // The engine: lh-fake-engine behind a profile whose version is a file's content.
  std::string version_file = cluster().dir().Join("engine-version");
  WriteTextFile(version_file, "0.8.4\n");
  std::string script = cluster().dir().Join("engine-version.sh");
  WriteTextFile(script, StrCat("#!/bin/sh\ncat '", version_file, "'\n"));
  ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
  std::string profiles = cluster().dir().Join("profiles");
  std::filesystem::create_directories(profiles);
  WriteTextFile(profiles + "/fake.yaml",
                StrCat(R"(name: fake
argv: [")",
                       BinPath("lh-fake-engine"), R"(", --host, "${host}", --port, "${port}",
       --model-name, "${model}"]
version_command: [")",
                       script, R"("]
defaults:
  model: fake-model
health: {path: /health, interval: 100ms, serving_interval: 200ms, serving_failures: 2}
probe: {api: chat, max_tokens: 1}
timeouts: {load: 20s, probe: 5s, stop_grace: 1s}
)"));
  // The workflow, committed in a repository whose tree then has an uncommitted change.
  std::string repo = cluster().dir().Join("repo");
  std::filesystem::create_directories(repo);
  Git(repo, {"init", "-q", "-b", "main"});
  std::string wf = repo + "/prov.yaml";
  WriteTextFile(wf,
                StrCat(R"(name: prov
stages:
  datagen:
    run: [lh-testjob, --output, "data=generated"]
  server:
    kind: service
    needs: [datagen]
    run: [")",
                       BinPath("lh-serve"), R"(", --profile, fake, --profiles-dir, ")", profiles,
                       R"(", --log-dir, .]
    cache: {key_on: [engine_version]}
  bench:
    needs: [server]
    run: [lh-testjob, --print, "${server.outputs.endpoint}", --metric, "score=1"]
)"));
  WriteTextFile(repo + "/train.py", "lr = 0.1\n");
  Git(repo, {"add", "-A"});
  Git(repo, {"commit", "-q", "-m", "campaign"});
  WriteTextFile(repo + "/train.py", "lr = 0.2\n");
  std::string head = std::string(StripWhitespace(Git(repo, {"rev-parse", "HEAD"})));
  std::string diff = Git(repo, {"diff", "--no-color", "--no-ext-diff", "HEAD"});
  ASSERT_FALSE(diff.empty());

  int64_t first = CliRunToEnd({"submit", wf});
  Result<v1::Run> run1 = cluster().GetRun(first);
  ASSERT_TRUE(run1.ok()) << run1.status();
  EXPECT_EQ(run1->source().kind(), "git");
  EXPECT_EQ(run1->source().commit(), head);
  EXPECT_EQ(run1->source().branch(), "main");
  EXPECT_TRUE(run1->source().dirty());
  EXPECT_EQ(run1->source().diff_sha256(), Sha256Hex(diff));
  EXPECT_EQ(run1->source().diff(), diff);
  const v1::AttemptEnvironment* server1 = LastEnv(FindStage(*run1, "server"));
  ASSERT_NE(server1, nullptr) << DescribeRun(*run1);
  EXPECT_EQ(server1->engine_profile(), "fake");
  EXPECT_EQ(server1->engine_version(), "0.8.4");
  const v1::AttemptEnvironment* gen1 = LastEnv(FindStage(*run1, "datagen"));
  ASSERT_NE(gen1, nullptr);
  Result<std::string> testjob_sha = Sha256File(BinPath("lh-testjob"));
  ASSERT_TRUE(testjob_sha.ok());
  EXPECT_EQ(gen1->executable_sha256(), *testjob_sha);
  EXPECT_EQ(gen1->executable_path(), BinPath("lh-testjob"));
  EXPECT_FALSE(gen1->agent_version().empty());
  CommandResult show = cluster().Cli({"show", std::to_string(first)});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find(StrCat("source:    ", head.substr(0, 12), " (main, dirty: diff ",
                                 Sha256Hex(diff).substr(0, 12))),
            std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("fake 0.8.4"), std::string::npos) << show.out;

  // The engine is upgraded; the agent, restarted, asks it again and tells the coordinator.
  WriteTextFile(version_file, "0.9.0\n");
  ASSERT_TRUE(cluster().RestartAgent(0).ok());
  CommandResult plan = cluster().Cli({"submit", wf, "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("engine version changed (0.8.4 -> 0.9.0)"), std::string::npos)
      << plan.out;
  for (const std::string& line : SplitLines(plan.out)) {
    if (line.rfind("datagen ", 0) == 0) {
      EXPECT_NE(line.find("reuse"), std::string::npos) << plan.out;
      EXPECT_NE(line.find(StrCat("same inputs as run ", first)), std::string::npos) << plan.out;
    }
    if (line.rfind("bench ", 0) == 0) {
      EXPECT_NE(line.find("upstream 'server' runs again"), std::string::npos) << plan.out;
    }
  }

  int64_t second = CliRunToEnd({"submit", wf});
  Result<v1::Run> run2 = cluster().GetRun(second);
  ASSERT_TRUE(run2.ok()) << run2.status();
  EXPECT_EQ(FindStage(*run2, "datagen")->status(), v1::STAGE_CACHED) << DescribeRun(*run2);
  EXPECT_EQ(FindStage(*run2, "server")->attempt_count(), 1) << DescribeRun(*run2);
  EXPECT_EQ(FindStage(*run2, "bench")->status(), v1::STAGE_SUCCEEDED) << DescribeRun(*run2);
  EXPECT_EQ(FindStage(*run2, "bench")->plan_reason(), "upstream 'server' runs again");
  const v1::AttemptEnvironment* server2 = LastEnv(FindStage(*run2, "server"));
  ASSERT_NE(server2, nullptr);
  EXPECT_EQ(server2->engine_version(), "0.9.0");
  CommandResult show_server = cluster().Cli({"show", std::to_string(second), "server"});
  ASSERT_EQ(show_server.exit_code, 0) << show_server.err;
  EXPECT_NE(show_server.out.find("fake 0.9.0"), std::string::npos) << show_server.out;

  // compare lists the engine first, before the params and stages.
  CommandResult cmp = cluster().Cli({"compare", std::to_string(first), std::to_string(second)});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  std::vector<std::string> lines = SplitLines(cmp.out);
  ASSERT_GE(lines.size(), 3u) << cmp.out;
  EXPECT_EQ(lines[0], "what differs besides params:") << cmp.out;
  EXPECT_NE(lines[2].find("engine version (server)"), std::string::npos) << cmp.out;
  EXPECT_NE(lines[2].find("fake 0.8.4"), std::string::npos) << cmp.out;
  EXPECT_NE(lines[2].find("fake 0.9.0"), std::string::npos) << cmp.out;
  EXPECT_LT(cmp.out.find("engine version"), cmp.out.find("stages:")) << cmp.out;

  // lineage: the first run's data generation fed its server and was reused by the second run;
  // the second run's server was fed a reused result.
  std::string r1 = std::to_string(first), r2 = std::to_string(second);
  CommandResult gen = cluster().Cli({"lineage", r1, "datagen"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_NE(gen.out.find(StrCat("made by: run ", r1, " stage datagen attempt 1\n")),
            std::string::npos)
      << gen.out;
  EXPECT_NE(gen.out.find(StrCat(r1, "    server   needs it")), std::string::npos) << gen.out;
  EXPECT_NE(gen.out.find(StrCat(r2, "    datagen  reused this result")), std::string::npos)
      << gen.out;
  CommandResult srv = cluster().Cli({"lineage", r2, "server"});
  ASSERT_EQ(srv.exit_code, 0) << srv.err;
  EXPECT_NE(srv.out.find(StrCat("datagen  run ", r1, " stage datagen attempt 1  reused")),
            std::string::npos)
      << srv.out;
  EXPECT_EQ(cluster().Cli({"lineage", r2, "nope"}).exit_code, 3);
}

}  // namespace
}  // namespace longhaul::testing

// Quotas with real daemons (docs/scheduling.md, "Quotas"): tokens of two teams (olga's from
// the tokens file's fourth column, nick's from longhauld's --teams) on one agent with two fake
// GPUs. Vision's quota is one GPU: its second stage waits with the quota's reason while nlp's
// run, submitted later, starts on the other GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;

class QuotaTest : public ClusterTest {};

std::string SleepStage(const std::string& name) {
  return StageYaml(name, YamlList({BinPath("lh-testjob"), "--sleep", "120"}), {},
                   {"resources: {gpus: 1, cpus: 1}"});
}

TEST_F(QuotaTest, ATeamAtItsGpuQuotaWaitsWhileAnotherTeamsRunStarts) {
  TempDir dir;
  Tokens t = MakeTokens(dir, {{"operator", "olga"}, {"operator", "nick"}});
  // Olga's team is the tokens file's fourth column; nick's line names none.
  std::string lines;
  for (const std::string& line : SplitLines(ReadTextFile(t.file))) {
    lines += line + (line.find(" olga ") != std::string::npos ? " vision\n" : "\n");
  }
  WriteTextFile(t.file, lines);
  ClusterOptions o;
  o.cpus = 4;
  o.gpus = 2;
  o.coordinator_flags = {"--tokens",           t.file,    "--quota",
                         "team:vision=gpus:1", "--teams", "nick=nlp"};
  o.client_token = t.by_name["olga"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));

  std::string vision_yaml = StrCat("name: vision\nstages:\n", SleepStage("a"), SleepStage("b"));
  CommandResult sub = cluster().Cli({"submit", cluster().WriteFile("vision.yaml", vision_yaml)});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  int64_t vision = std::stoll(sub.out);
  std::string quota_reason = "waiting: team vision at its quota of 1 GPU (1 in use)";
  Result<v1::Run> held = cluster().WaitForRun(vision, [&](const v1::Run& r) {
    const v1::Stage* a = FindStage(r, "a");
    const v1::Stage* b = FindStage(r, "b");
    bool one_runs = a->status() == v1::STAGE_RUNNING || b->status() == v1::STAGE_RUNNING;
    bool one_waits = (a->status() == v1::STAGE_READY && a->reason() == quota_reason) ||
                     (b->status() == v1::STAGE_READY && b->reason() == quota_reason);
    return one_runs && one_waits;
  });
  ASSERT_TRUE(held.ok()) << held.status().message();

  // Nick, of team nlp by --teams, submits later: his run takes the other GPU.
  std::string nlp_yaml = StrCat("name: nlp\nstages:\n", SleepStage("x"));
  std::map<std::string, std::string> env = cluster().CliEnv();
  env["LONGHAUL_TOKEN"] = t.by_name["nick"];
  CommandResult nsub =
      RunCommand({BinPath("longhaul"), "submit", cluster().WriteFile("nlp.yaml", nlp_yaml)}, env);
  ASSERT_EQ(nsub.exit_code, 0) << nsub.err;
  int64_t nlp = std::stoll(nsub.out);
  Result<v1::Run> started = cluster().WaitForRun(
      nlp, [](const v1::Run& r) { return FindStage(r, "x")->status() == v1::STAGE_RUNNING; });
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ(started->team(), "nlp");
  EXPECT_EQ(started->user(), "nick");

  Result<v1::Run> still = cluster().GetRun(vision);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->team(), "vision");
  int waiting = 0;
  for (const v1::Stage& s : still->stages()) {
    if (s.status() != v1::STAGE_READY) continue;
    ++waiting;
    EXPECT_EQ(s.reason(), quota_reason);
    EXPECT_EQ(s.attempt_count(), 0);
  }
  EXPECT_EQ(waiting, 1) << DescribeRun(*still);
  CommandResult show = cluster().Cli({"show", std::to_string(vision)});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr(quota_reason));

  ASSERT_EQ(cluster().Cli({"cancel", std::to_string(vision)}).exit_code, 0);
  ASSERT_EQ(RunCommand({BinPath("longhaul"), "cancel", std::to_string(nlp)}, env).exit_code, 0);
}

}  // namespace
}  // namespace longhaul::testing

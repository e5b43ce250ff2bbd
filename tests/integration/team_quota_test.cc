// A team's quota changed without a restart, with real daemons (docs/scheduling.md, "Seeing
// quotas" and "Changing quotas at run time"): on one agent with two fake GPUs and
// `--quota team:vision=gpus:1`, the second of vision's two GPU stages waits at the quota;
// `longhaul quota --team vision --gpus 2` (an admin's; an operator's is refused) starts it while
// the first still runs, `longhaul quotas` shows the figures, and the stored quota wins over
// --quota after a restart. A budget from --budget is listed, and removed with `longhaul budget
// --workflow NAME --rm`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"
#include "tests/integration/tokens_cluster.h"

namespace longhaul::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

using TeamQuotaTest = TokensClusterTest;

TEST_F(TeamQuotaTest, ARaisedQuotaStartsAWaitingStageWithoutARestart) {
  tokens_ = MakeTokens(dir_, {{"admin", "ada"}, {"operator", "olga"}});
  ClusterOptions o;
  o.agents = 1;
  o.cpus = 2;
  o.gpus = 2;
  o.coordinator_flags = {"--tokens", tokens_.file,         "--teams",  "olga=vision",
                         "--quota",  "team:vision=gpus:1", "--budget", "workflow:eagle=20/7d"};
  o.client_token = tokens_.by_name["ada"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));

  // Two stages of one GPU each that run until cancelled.
  std::string yaml = StrCat("name: vision-a\nstages:\n",
                            StageYaml("a", YamlList({BinPath("lh-testjob"), "--sleep", "600"}), {},
                                      {"resources: {gpus: 1, cpus: 1}"}),
                            StageYaml("b", YamlList({BinPath("lh-testjob"), "--sleep", "600"}), {},
                                      {"resources: {gpus: 1, cpus: 1}"}));
  CommandResult submitted = As("olga", {"submit", cluster().WriteFile("v.yaml", yaml)});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  int64_t run = std::stoll(submitted.out);
  const std::string at_quota = "waiting: team vision at its quota of 1 GPU (1 in use)";
  Result<v1::Run> waits = cluster().WaitForRun(run, [&](const v1::Run& r) {
    int running = 0, held = 0;
    for (const char* name : {"a", "b"}) {
      const v1::Stage* s = FindStage(r, name);
      running += s->status() == v1::STAGE_RUNNING;
      held += s->status() == v1::STAGE_READY && s->reason() == at_quota;
    }
    return running == 1 && held == 1;
  });
  ASSERT_TRUE(waits.ok()) << waits.status().message();

  CommandResult before = As("olga", {"quotas"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_THAT(before.out, HasSubstr("team vision           1      1       1         0     0"));

  CommandResult denied = As("olga", {"quota", "--team", "vision", "--gpus", "2"});
  EXPECT_EQ(denied.exit_code, 7) << denied.err;
  CommandResult set = As("ada", {"quota", "--team", "vision", "--gpus", "2"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.out,
            "team vision: quota gpus:2 (1 GPUs in use, 1 GPU stages waiting); it applies from "
            "the next dispatch pass\n");
  Result<v1::Run> both = cluster().WaitForRun(run, [](const v1::Run& r) {
    return FindStage(r, "a")->status() == v1::STAGE_RUNNING &&
           FindStage(r, "b")->status() == v1::STAGE_RUNNING;
  });
  ASSERT_TRUE(both.ok()) << both.status().message();

  CommandResult after = As("olga", {"quotas"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_THAT(after.out, HasSubstr("team vision           2      2       2         0     0"));
  EXPECT_THAT(after.out, HasSubstr("ada\n"));
  EXPECT_THAT(after.out, HasSubstr("user olga"));

  // Restarted with the same --quota: the stored quota is the one in force.
  Status restarted = cluster().RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted.message();
  CommandResult json = As("olga", {"quotas", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  // (in_use, between them, depends on whether the agent has reconnected yet)
  EXPECT_THAT(json.out, ContainsRegex("\"account\":\"team:vision\",\"has_quota\":true,\"gpus\":2,"
                                      "[^}]*\"set_by\":\"ada\""))
      << json.out;
  EXPECT_THAT(json.out, HasSubstr("\"rule\":\"gpus:2\"")) << json.out;

  ASSERT_EQ(As("olga", {"cancel", std::to_string(run)}).exit_code, 0);

  // The budget from --budget is there, set by it; an admin removes it (an operator may not).
  CommandResult budgets = As("olga", {"budgets"});
  ASSERT_EQ(budgets.exit_code, 0) << budgets.err;
  EXPECT_THAT(budgets.out, HasSubstr("workflow  eagle"));
  EXPECT_THAT(budgets.out, HasSubstr("--budget\n"));
  EXPECT_EQ(As("olga", {"budget", "--workflow", "eagle", "--rm"}).exit_code, 7);
  CommandResult rm = As("ada", {"budget", "--workflow", "eagle", "--rm"});
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(rm.out, "workflow eagle: budget 20 GPU-h for 7d removed\n");
  CommandResult none = As("olga", {"budgets"});
  EXPECT_THAT(none.err, HasSubstr("no team or workflow budgets"));
  Result<std::string> audit = cluster().Query(
      "SELECT group_concat(principal || ' ' || action || ' ' || target, '; ') FROM audit "
      "WHERE action IN ('SetQuota', 'RemoveBudget')");
  ASSERT_TRUE(audit.ok()) << audit.status().message();
  EXPECT_EQ(*audit, "ada SetQuota team vision; ada RemoveBudget workflow eagle")
      << "the operator's refused calls are not changes";
}

}  // namespace
}  // namespace longhaul::testing

// A team's GPU-hour budget with real daemons (docs/scheduling.md, "Budgets for a team or a
// workflow"): on one agent with three fake GPUs, an admin's tiny budget for team vision pauses
// both of vision's runs once their first stages used it, while team infra's run goes on; the
// pause holds across a coordinator restart, and raising the budget lets both runs finish.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"
#include "tests/integration/tokens_cluster.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// `first` holds a GPU for two seconds, then `second` (one GPU) ends at once.
std::string TwoStepGpuWorkflow(const std::string& name) {
  return StrCat("name: ", name, "\nstages:\n",
                StageYaml("first", YamlList({BinPath("lh-testjob"), "--sleep", "2"}), {},
                          {"resources: {gpus: 1, cpus: 1}"}),
                StageYaml("second", YamlList({BinPath("lh-testjob")}), {"first"},
                          {"resources: {gpus: 1, cpus: 1}"}));
}

class TeamBudgetTest : public TokensClusterTest {
 protected:
  int64_t SubmitAs(const std::string& who, const std::string& name) {
    CommandResult r =
        As(who, {"submit", cluster().WriteFile(name + ".yaml", TwoStepGpuWorkflow(name))});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? std::stoll(r.out) : 0;
  }
};

TEST_F(TeamBudgetTest, ATeamsBudgetPausesItsTwoRunsWhileAnotherTeamsRunGoesOn) {
  tokens_ = MakeTokens(dir_, {{"admin", "ada"}, {"operator", "olga"}, {"operator", "ian"}});
  AddTeams(tokens_, {{"olga", "vision"}, {"ian", "infra"}});
  ClusterOptions o;
  o.agents = 1;
  o.cpus = 3;
  o.gpus = 3;
  o.coordinator_flags = {"--tokens", tokens_.file};
  o.client_token = tokens_.by_name["ada"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));

  // An operator may not set it; an admin may (0.001 GPU-h: 3.6 GPU-seconds).
  CommandResult denied = As("olga", {"budget", "--team", "vision", "--gpu-hours", "1"});
  EXPECT_EQ(denied.exit_code, 7) << denied.err;
  CommandResult set = As("ada", {"budget", "--team", "vision", "--gpu-hours", "0.001"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_THAT(set.out, StartsWith("team vision: budget 0.001 GPU-h for 30d, 0 used since "));

  int64_t v1 = SubmitAs("olga", "vision-a");
  int64_t v2 = SubmitAs("olga", "vision-b");
  int64_t other = SubmitAs("ian", "infra-a");
  ASSERT_GT(v1, 0);
  ASSERT_GT(v2, 0);
  ASSERT_GT(other, 0);

  // Two GPUs for two seconds each: vision's 3.6 GPU-seconds are used before they end.
  const std::string reason = "team vision's budget of 0.001 GPU-h for 30d reached (";
  for (int64_t id : {v1, v2}) {
    Result<v1::Run> paused = cluster().WaitForRun(id, [&](const v1::Run& r) {
      const v1::Stage* second = FindStage(r, "second");
      return second->status() == v1::STAGE_READY && second->reason().starts_with(reason);
    });
    ASSERT_TRUE(paused.ok()) << paused.status().message();
    EXPECT_THAT(paused->budget_hold(), StartsWith(reason));
    EXPECT_EQ(FindStage(*paused, "second")->attempt_count(), 0);
  }
  Result<v1::Run> infra = cluster().WaitForRunEnd(other, 60'000);
  ASSERT_TRUE(infra.ok()) << infra.status().message();
  EXPECT_EQ(infra->status(), v1::RUN_SUCCEEDED) << "team infra's run is not held";
  EXPECT_EQ(infra->team(), "infra");

  CommandResult show = As("olga", {"show", std::to_string(v1)});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr(StrCat("  budget:    ", reason)));
  EXPECT_THAT(show.out, HasSubstr("no new attempts until an admin raises it or its period ends"));
  CommandResult list = As("olga", {"budgets"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("SCOPE"));
  EXPECT_THAT(list.out, HasSubstr(StrCat("reached: runs ", v1, ", ", v2, " paused")));

  // A restarted longhauld keeps them paused.
  Status restarted = cluster().RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted.message();
  for (int64_t id : {v1, v2}) {
    Result<v1::Run> still = cluster().GetRun(id);
    ASSERT_TRUE(still.ok()) << still.status().message();
    EXPECT_EQ(FindStage(*still, "second")->status(), v1::STAGE_READY);
    EXPECT_THAT(FindStage(*still, "second")->reason(), StartsWith(reason));
  }

  // Raised: both runs go on to their end.
  CommandResult raise = As("ada", {"budget", "--team", "vision", "--gpu-hours", "1"});
  ASSERT_EQ(raise.exit_code, 0) << raise.err;
  EXPECT_THAT(raise.out, HasSubstr("its runs may start new attempts"));
  for (int64_t id : {v1, v2}) {
    Result<v1::Run> end = cluster().WaitForRunEnd(id, 60'000);
    ASSERT_TRUE(end.ok()) << end.status().message();
    EXPECT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
    EXPECT_EQ(end->budget_hold(), "");
  }
  Result<std::string> audit = cluster().Query(
      "SELECT group_concat(principal || ' ' || action || ' ' || target, '; ') FROM audit "
      "WHERE action = 'SetBudget'");
  ASSERT_TRUE(audit.ok()) << audit.status().message();
  EXPECT_EQ(*audit, "ada SetBudget team vision; ada SetBudget team vision")
      << "the operator's refused call is not a change";
}

}  // namespace
}  // namespace longhaul::testing

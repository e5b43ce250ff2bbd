// Reservations with real daemons (docs/scheduling.md, "Reservations"): on one agent with two
// fake GPUs, a reservation of one of them for team vision keeps team infra's two-GPU stage
// waiting with the reservation named in its reason (across a longhauld restart), while
// vision's run starts on the reserved GPU; cancelling it lets infra's stage run.
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

class ReservationTest : public TokensClusterTest {
 protected:
  int64_t SubmitAs(const std::string& who, const std::string& name, int gpus) {
    std::string wf = StrCat("name: ", name, "\nstages:\n",
                            StageYaml("train", YamlList({BinPath("lh-testjob")}), {},
                                      {StrCat("resources: {gpus: ", gpus, ", cpus: 1}")}));
    CommandResult r = As(who, {"submit", cluster().WriteFile(name + ".yaml", wf)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? std::stoll(r.out) : 0;
  }
};

TEST_F(ReservationTest, ATeamsReservationKeepsAnotherTeamOffAndItsOwnRunStartsOnIt) {
  tokens_ = MakeTokens(dir_, {{"admin", "ada"}, {"operator", "olga"}, {"operator", "ian"}});
  AddTeams(tokens_, {{"olga", "vision"}, {"ian", "infra"}});
  ClusterOptions o;
  o.agents = 1;
  o.cpus = 3;
  o.gpus = 2;
  o.coordinator_flags = {"--tokens", tokens_.file};
  o.client_token = tokens_.by_name["ada"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));

  CommandResult denied = As("olga", {"reserve", "n0", "--gpus", "1", "--team", "vision", "--until",
                                     "+2h", "--reason", "sprint"});
  EXPECT_EQ(denied.exit_code, 7) << denied.err;
  CommandResult reserved = As("ada", {"reserve", "n0", "--gpus", "1", "--team", "vision", "--until",
                                      "+2h", "--reason", "sprint"});
  ASSERT_EQ(reserved.exit_code, 0) << reserved.err;
  EXPECT_THAT(reserved.out, ContainsRegex("^reservation 1: 1 of n0's GPUs for team vision, "));
  EXPECT_THAT(As("olga", {"reservations"}).out, HasSubstr("team vision"));

  // Infra's stage needs both GPUs: one is vision's, so it waits, and says why.
  int64_t infra = SubmitAs("ian", "infra-long", 2);
  ASSERT_GT(infra, 0);
  Result<v1::Run> waiting = cluster().WaitForRun(infra, [](const v1::Run& r) {
    return FindStage(r, "train")->reason().find("reserved for team vision") != std::string::npos;
  });
  ASSERT_TRUE(waiting.ok()) << waiting.status() << cluster().Logs();
  EXPECT_THAT(FindStage(*waiting, "train")->reason(),
              ContainsRegex("^waiting for an agent with 1 cpus, 2 GPUs free: 1 of n0's 2 GPUs are "
                            "reserved for team vision until [0-9: -]+UTC \\(reservation 1\\)$"));

  // Vision's run takes the reserved GPU (and ends).
  int64_t vision = SubmitAs("olga", "vision-a", 1);
  Result<v1::Run> done = cluster().WaitForRunEnd(vision, 60'000);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status(), v1::RUN_SUCCEEDED) << cluster().Logs();

  // Stored: a restarted longhauld keeps it, and infra's stage still waits.
  ASSERT_TRUE(cluster().RestartCoordinator().ok()) << cluster().Logs();
  EXPECT_THAT(As("ada", {"agents"}).out, HasSubstr("reservation 1: 1 of n0's GPUs"));
  Result<v1::Run> still = cluster().GetRun(infra);
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(FindStage(*still, "train")->status(), v1::STAGE_READY);

  CommandResult cancel = As("ada", {"unreserve", "1", "--reason", "sprint over"});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_THAT(cancel.out, HasSubstr("reservation 1 cancelled"));
  Result<v1::Run> infra_done = cluster().WaitForRunEnd(infra, 60'000);
  ASSERT_TRUE(infra_done.ok()) << infra_done.status();
  EXPECT_EQ(infra_done->status(), v1::RUN_SUCCEEDED) << cluster().Logs();
  CommandResult audit = As("ada", {"audit"});
  EXPECT_THAT(audit.out, HasSubstr("Reserve"));
  EXPECT_THAT(audit.out, HasSubstr("Unreserve"));
}

}  // namespace
}  // namespace longhaul::testing

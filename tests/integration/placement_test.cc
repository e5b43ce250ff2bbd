// Placement with real daemons: two agents with different labels and fake GPUs (2 and 4). A
// stage's node_selector picks the agent, a stage that asks 3 GPUs gets 3 of one agent, and a
// stage whose selector no agent matches waits, saying so in `longhaul show`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;

class PlacementTest : public ClusterTest {};

TEST_F(PlacementTest, LabelsAndGpusDecideWhichAgentRunsAStage) {
  ClusterOptions o;
  o.agents = 2;
  o.cpus = 4;
  o.per_agent_gpus = {2, 4};
  o.per_agent_flags = {{"--label", "gpu=small"}, {"--label", "gpu=big", "--label", "zone=a"}};
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  CommandResult agents = cluster().Cli({"agents"});
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  EXPECT_THAT(agents.out, HasSubstr("gpu=small"));
  EXPECT_THAT(agents.out, HasSubstr("gpu=big,zone=a"));

  std::string sleep = YamlList({BinPath("lh-testjob"), "--sleep", "60"});
  Result<int64_t> id = cluster().Submit(
      "name: placement\nstages:\n" +
      StageYaml("three_gpus", sleep, {}, {"resources: {gpus: 3}"}) +
      StageYaml("pinned", sleep, {}, {"node_selector: {gpu: small}"}) +
      StageYaml("nowhere", sleep, {}, {"node_selector: {gpu: h200}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRun(*id, [](const v1::Run& r) {
    const v1::Stage* a = FindStage(r, "three_gpus");
    const v1::Stage* b = FindStage(r, "pinned");
    return a->status() == v1::STAGE_RUNNING && b->status() == v1::STAGE_RUNNING;
  });
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(FindStage(*run, "three_gpus")->agent_id(), "n1") << "only n1 has 3 GPUs";
  EXPECT_EQ(FindStage(*run, "pinned")->agent_id(), "n0");
  const v1::Stage* nowhere = FindStage(*run, "nowhere");
  EXPECT_EQ(nowhere->status(), v1::STAGE_READY);
  EXPECT_EQ(nowhere->reason(), "no agent matches node_selector {gpu: h200}");

  // The 3 GPUs are n1's, held by the one attempt.
  int64_t attempt = FindStage(*run, "three_gpus")->attempts(0).id();
  Result<std::vector<v1::AgentInfo>> infos = cluster().ListAgents();
  ASSERT_TRUE(infos.ok()) << infos.status().message();
  for (const v1::AgentInfo& a : *infos) {
    int held = 0;
    for (const v1::GpuInfo& g : a.gpus()) held += g.attempt_id() == attempt ? 1 : 0;
    EXPECT_EQ(held, a.id() == "n1" ? 3 : 0) << a.id();
  }

  CommandResult show = cluster().Cli({"show", std::to_string(*id)});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("no agent matches node_selector {gpu: h200}"));
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(*id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  Result<v1::Run> ended = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(ended.ok()) << ended.status().message();
  EXPECT_EQ(ended->status(), v1::RUN_CANCELLED);
}

}  // namespace
}  // namespace longhaul::testing

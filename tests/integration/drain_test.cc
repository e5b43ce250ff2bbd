// Maintenance windows with real daemons (docs/scheduling.md, "Maintenance"): `longhaul agent
// drain --at` lets a stage that ends in time start and keeps a long one waiting with the drain
// named in its reason (across a longhauld restart), until `agent undrain`; at the drain's time
// an attempt that still runs is stopped and queued again with no retry spent.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/strings.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

class DrainTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterOptions o;
    o.agents = 1;
    o.cpus = 2;
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  }
  CommandResult Cli(const std::vector<std::string>& args) {
    CommandResult r = cluster().Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r;
  }
};

TEST_F(DrainTest, ADrainAtATimeLetsAShortStageStartAndKeepsALongOneOffUntilUndrained) {
  std::string agent = cluster().AgentId(0);
  CommandResult drain = Cli({"agent", "drain", agent, "--at", "+2h", "--reason", "kernel upgrade"});
  EXPECT_THAT(drain.out, ContainsRegex("agent n0 drains at .* UTC \\(in [0-9hms]+\\)"));
  EXPECT_THAT(drain.out, HasSubstr(": kernel upgrade (by "));
  std::string wf = StrCat("name: window\nstages:\n",
                          StageYaml("short", YamlList({"true"}), {}, {"timeout: 10m"}),
                          StageYaml("long", YamlList({"true"}), {}, {"timeout: 6h"}));
  Result<int64_t> run = cluster().Submit(wf);
  ASSERT_TRUE(run.ok()) << run.status();
  Result<v1::Run> waiting = cluster().WaitForRun(*run, [](const v1::Run& r) {
    return FindStage(r, "short")->status() == v1::STAGE_SUCCEEDED &&
           FindStage(r, "long")->reason().find("drains at") != std::string::npos;
  });
  ASSERT_TRUE(waiting.ok()) << waiting.status() << cluster().Logs();
  const v1::Stage* long_stage = FindStage(*waiting, "long");
  EXPECT_EQ(long_stage->status(), v1::STAGE_READY);
  EXPECT_THAT(long_stage->reason(),
              ContainsRegex("^agent n0 drains at [0-9:-]+ ?[0-9:]* UTC \\(kernel upgrade\\): "
                            "this stage's timeout 6h00m does not fit$"));
  EXPECT_THAT(Cli({"agents"}).out, HasSubstr("agent n0 drains at"));

  // Stored: a restarted longhauld keeps it, and the long stage still waits.
  ASSERT_TRUE(cluster().RestartCoordinator().ok()) << cluster().Logs();
  EXPECT_THAT(Cli({"agents"}).out, HasSubstr("kernel upgrade"));
  Result<v1::Run> still = cluster().GetRun(*run);
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(FindStage(*still, "long")->status(), v1::STAGE_READY);

  CommandResult undrain = Cli({"agent", "undrain", agent, "--reason", "done"});
  EXPECT_THAT(undrain.out, HasSubstr("not drained"));
  Result<v1::Run> done = cluster().WaitForRunEnd(*run, 60'000);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status(), v1::RUN_SUCCEEDED) << cluster().Logs();
  CommandResult audit = Cli({"audit"});
  EXPECT_THAT(audit.out, HasSubstr("DrainAgent"));
  EXPECT_THAT(audit.out, HasSubstr("kernel upgrade"));
}

TEST_F(DrainTest, AtTheDrainsTimeARunningAttemptIsStoppedAndRunsAgainAfterTheUndrain) {
  std::string agent = cluster().AgentId(0);
  std::string release = cluster().dir().Join("release");
  // Attempt 1 waits for the release file (stopped by the drain before it comes); later ones end.
  std::string wf = StrCat(
      "name: stopped\nstages:\n",
      StageYaml("train",
                YamlList({"sh", "-c",
                          StrCat("echo \"$LONGHAUL_ATTEMPT\" >> \"$LONGHAUL_OUTPUT_DIR/attempts\"; "
                                 "if [ \"$LONGHAUL_ATTEMPT\" = 1 ]; then while [ ! -e ",
                                 release, " ]; do sleep 0.05; done; fi")}),
                {}, {"timeout: 6h", "grace: 5s", "resume: true", "retry: {limit: 0}"}));
  Result<int64_t> run = cluster().Submit(wf);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(cluster()
                  .WaitForRun(*run,
                              [](const v1::Run& r) {
                                return FindStage(r, "train")->status() == v1::STAGE_RUNNING;
                              })
                  .ok())
      << cluster().Logs();
  // The drain's time is a moment away: the attempt runs into it.
  Cli({"agent", "drain", agent, "--at", "+1s", "--reason", "kernel upgrade"});
  Result<v1::Run> stopped = cluster().WaitForRun(
      *run,
      [](const v1::Run& r) {
        const v1::Stage* s = FindStage(r, "train");
        return s->status() == v1::STAGE_READY && s->attempts_size() == 1 &&
               s->attempts(0).state() == v1::ATTEMPT_KILLED;
      },
      30'000);
  ASSERT_TRUE(stopped.ok()) << stopped.status() << cluster().Logs();
  const v1::Stage* s = FindStage(*stopped, "train");
  EXPECT_THAT(s->attempts(0).reason(), HasSubstr("drain: agent n0 drained at"));
  EXPECT_THAT(s->attempts(0).reason(), HasSubstr("(kernel upgrade)"));
  // Ready again, though retry.limit is 0: the stop spent no retry.
  EXPECT_THAT(s->reason(), HasSubstr("agent n0 is drained since"));

  Cli({"agent", "undrain", agent});
  Result<v1::Run> done = cluster().WaitForRunEnd(*run, 60'000);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status(), v1::RUN_SUCCEEDED) << cluster().Logs();
  const v1::Stage* train = FindStage(*done, "train");
  EXPECT_EQ(train->attempts_size(), 2);
  // One output dir (resume: true): both attempts wrote into it.
  EXPECT_EQ(ReadTextFile(train->attempts(1).output_dir() + "/attempts"), "1\n2\n");
}

}  // namespace
}  // namespace longhaul::testing

// longhauld is killed (SIGKILL) while a preemption it asked for is under way: after its restart
// the victim still ends `preempted` with its reason, spends an infrastructure retry, and the
// high-class stage gets the GPU (docs/scheduling.md, "How a preempted attempt stops and comes
// back"). Real daemons, a real stage process that ignores SIGTERM until its grace is over.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"

namespace longhaul::testing {
namespace {

// Param: whether the victim ends while longhauld is down (else after its restart).
class PreemptRestartTest : public FaultTest, public ::testing::WithParamInterface<bool> {
 protected:
  int64_t SubmitClass(const std::string& name, const std::string& yaml, const std::string& klass) {
    CommandResult r =
        cluster().Cli({"submit", cluster().WriteFile(name + ".yaml", yaml), "--priority", klass});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? std::stoll(r.out) : 0;
  }
};

std::string PreemptGpuStage(const std::string& name, std::vector<std::string> args,
                            const std::string& extra = "") {
  args.insert(args.begin(), BinPath("lh-testjob"));
  std::vector<std::string> opts = {"resources: {gpus: 1, cpus: 1}"};
  if (!extra.empty()) opts.push_back(extra);
  return StrCat("name: ", name, "\nstages:\n", StageYaml("work", YamlList(args), {}, opts));
}

TEST_P(PreemptRestartTest, TheVictimEndsPreemptedAcrossAKilledCoordinator) {
  bool end_while_down = GetParam();
  ClusterOptions o = FaultOptions(1, "10s");
  o.cpus = 1;
  o.gpus = 1;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  // It ignores SIGTERM: it ends only when its grace is over, by SIGKILL; the longer grace
  // outlasts longhauld's restart.
  int64_t low = SubmitClass("training",
                            PreemptGpuStage("training", {"--sleep", "30", "--ignore-sigterm"},
                                            end_while_down ? "grace: 2s" : "grace: 6s"),
                            "low");
  ASSERT_GT(low, 0);
  Result<v1::Run> running = cluster().WaitForRun(low, [](const v1::Run& r) {
    const v1::Attempt* a = FindAttempt(r, "work", 1);
    return a != nullptr && a->state() == v1::ATTEMPT_RUNNING && a->pid() > 0;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();
  pid_t pid = static_cast<pid_t>(FindAttempt(*running, "work", 1)->pid());
  std::string dir = AttemptDirOf(cluster(), *FindAttempt(*running, "work", 1));

  int64_t high = SubmitClass("urgent", PreemptGpuStage("urgent", {"--sleep", "0"}), "high");
  ASSERT_GT(high, 0);
  // The stop is decided (and stored with it): the waiting stage's reason says so.
  Result<v1::Run> waiting = cluster().WaitForRun(high, [&](const v1::Run& r) {
    return r.stages(0).reason().find(StrCat("preempting run ", low, " stage work (low)")) !=
           std::string::npos;
  });
  ASSERT_TRUE(waiting.ok()) << waiting.status().message();
  // The agent has the stop (it writes cancel.json, then signals the stage).
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir + "/cancel.json"); }, 10'000));
  cluster().KillCoordinator(SIGKILL);
  if (end_while_down) {
    ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(pid); }, 20'000)) << "grace over, killed";
  } else {
    EXPECT_TRUE(ProcessAlive(pid)) << "still within its grace";
  }
  Status st = cluster().RestartCoordinator();
  ASSERT_TRUE(st.ok()) << st.message();

  Result<v1::Run> high_end = cluster().WaitForRunEnd(high, 30'000);
  ASSERT_TRUE(high_end.ok()) << high_end.status().message();
  EXPECT_EQ(high_end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*high_end);
  Result<v1::Run> after = cluster().WaitForRun(low, [](const v1::Run& r) {
    const v1::Attempt* a = FindAttempt(r, "work", 1);
    return a != nullptr && a->ended_at_ms() > 0;
  });
  ASSERT_TRUE(after.ok()) << after.status().message();
  const v1::Attempt& stopped = *FindAttempt(*after, "work", 1);
  EXPECT_EQ(stopped.state(), v1::ATTEMPT_KILLED) << DescribeRun(*after);
  EXPECT_THAT(stopped.reason(),
              ::testing::MatchesRegex(StrCat("preempted: room for run ", high,
                                             " stage work \\(high\\); [0-9.]+ GPU-min after its "
                                             "start")));
  EXPECT_GE(high_end->stages(0).attempts(0).started_at_ms(), stopped.ended_at_ms());
  Result<std::string> retries = cluster().Query(
      StrCat("SELECT infra_retries_used || ' ' || retries_used FROM stages WHERE run_id = ", low));
  ASSERT_TRUE(retries.ok()) << retries.status().message();
  EXPECT_EQ(StripWhitespace(*retries), "1 0");
  Result<std::string> stop =
      cluster().Query(StrCat("SELECT stop_kind FROM attempts WHERE id = ", stopped.id()));
  ASSERT_TRUE(stop.ok()) << stop.status().message();
  EXPECT_EQ(StripWhitespace(*stop), "preempted");
  // Its next attempt would sleep on: it is not needed here.
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(low)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
}

INSTANTIATE_TEST_SUITE_P(VictimEnds, PreemptRestartTest, ::testing::Values(false, true),
                         [](const auto& info) {
                           return info.param ? "WhileDown" : "AfterRestart";
                         });

}  // namespace
}  // namespace longhaul::testing

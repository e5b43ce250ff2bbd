// Steering runs from the CLI: cancel stops whole process groups, retry re-runs exactly the
// stage and its dependents that did not succeed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <sstream>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

class ControlTest : public ClusterTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }
};

std::vector<pid_t> ReadPids(const std::string& path) {
  std::vector<pid_t> pids;
  std::istringstream in(ReadTextFile(path));
  long pid = 0;
  while (in >> pid) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

int ExitCodeOf(const std::optional<int>& status) {
  if (!status) return -1;
  if (WIFEXITED(*status)) return WEXITSTATUS(*status);
  return 128 + WTERMSIG(*status);
}

TEST_F(ControlTest, CancelKillsTheStagesWholeProcessGroup) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string pid_dir = cluster().dir().Join("pids");
  std::string file = cluster().WriteFile(
      "cancel.yaml", "name: cancel\nstages:\n" +
                         StageYaml("spawner",
                                   YamlList({"lh-testjob", "--spawn-children", "3", "--pid-dir",
                                             pid_dir, "--sleep", "300"}),
                                   {}, {"grace: 2s"}) +
                         StageYaml("after", "[lh-testjob]", {"spawner"}));
  CommandResult submit = cluster().Cli({"submit", file});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t id = std::stoll(submit.out);
  std::unique_ptr<Subprocess> watch = cluster().StartCli({"watch", std::to_string(id)}, "watch");
  ASSERT_NE(watch, nullptr);

  ASSERT_TRUE(WaitFor([&] { return ReadPids(pid_dir + "/children.pids").size() == 3; }, 20'000));
  Result<v1::Run> running = cluster().WaitForRun(id, [](const v1::Run& r) {
    const v1::Stage* s = FindStage(r, "spawner");
    return s->attempts_size() == 1 && s->attempts(0).state() == v1::ATTEMPT_RUNNING &&
           s->attempts(0).pid() > 0;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();
  std::vector<pid_t> pids = ReadPids(pid_dir + "/children.pids");
  pids.push_back(static_cast<pid_t>(FindStage(*running, "spawner")->attempts(0).pid()));
  for (pid_t p : pids) ASSERT_TRUE(ProcessAlive(p)) << p;

  CommandResult cancel = cluster().Cli({"cancel", std::to_string(id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_TRUE(StartsWith(cancel.out, StrCat("run ", id, ": "))) << cancel.out;

  EXPECT_TRUE(WaitFor(
      [&] {
        for (pid_t p : pids) {
          if (ProcessAlive(p)) return false;
        }
        return true;
      },
      20'000));
  for (pid_t p : pids) EXPECT_FALSE(ProcessAlive(p)) << "pid " << p << " outlived the cancel";

  Result<v1::Run> run = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_CANCELLED) << DescribeRun(*run);
  const v1::Stage* spawner = FindStage(*run, "spawner");
  EXPECT_EQ(spawner->status(), v1::STAGE_CANCELLED);
  ASSERT_EQ(spawner->attempts_size(), 1);
  EXPECT_EQ(spawner->attempts(0).state(), v1::ATTEMPT_KILLED);
  EXPECT_TRUE(StartsWith(spawner->attempts(0).reason(), "cancelled"))
      << spawner->attempts(0).reason();
  EXPECT_EQ(FindStage(*run, "after")->status(), v1::STAGE_CANCELLED);
  EXPECT_EQ(FindStage(*run, "after")->attempts_size(), 0);

  EXPECT_EQ(ExitCodeOf(watch->Wait(20'000)), 5);
}

TEST_F(ControlTest, RetryRerunsTheFailedStageAndItsSkippedDependentsOnly) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string marker = cluster().dir().Join("b.failed-once");
  std::string j = Journal();
  std::string fail_once =
      StrCat("if [ -e '", marker, "' ]; then exit 0; fi; touch '", marker, "'; exit 3");
  std::string file = cluster().WriteFile(
      "retry.yaml",
      "name: retry\nstages:\n" + StageYaml("a", JournaledRun(j, {"--output", "x=1"})) +
          StageYaml("b", JournaledScript(j, fail_once), {"a"}) +
          StageYaml("c", JournaledRun(j, {}), {"b"}) + StageYaml("d", JournaledRun(j, {}), {"c"}) +
          StageYaml("side", JournaledRun(j, {}), {"a"}) +
          StageYaml("broken", JournaledRun(j, {"--exit", "4"})));
  CommandResult submit = cluster().Cli({"submit", file});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t id = std::stoll(submit.out);
  Result<v1::Run> first = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->status(), v1::RUN_FAILED) << DescribeRun(*first);
  EXPECT_EQ(FindStage(*first, "b")->status(), v1::STAGE_FAILED);
  EXPECT_EQ(FindStage(*first, "c")->status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(FindStage(*first, "d")->status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(FindStage(*first, "broken")->status(), v1::STAGE_FAILED);

  CommandResult retry = cluster().Cli({"retry", std::to_string(id), "b"});
  ASSERT_EQ(retry.exit_code, 0) << retry.err;
  EXPECT_NE(retry.out.find("running"), std::string::npos) << retry.out;
  Result<v1::Run> run = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  // `broken` was not retried, so the run still failed, because of it alone.
  EXPECT_EQ(run->status(), v1::RUN_FAILED) << DescribeRun(*run);
  EXPECT_EQ(run->reason(), "broken failed");
  for (const char* name : {"a", "b", "c", "d", "side"}) {
    EXPECT_EQ(FindStage(*run, name)->status(), v1::STAGE_SUCCEEDED) << name;
  }
  std::map<std::string, int> attempts;
  for (const v1::Stage& s : run->stages()) attempts[s.name()] = s.attempt_count();
  EXPECT_EQ(attempts, (std::map<std::string, int>{
                          {"a", 1}, {"b", 2}, {"c", 1}, {"d", 1}, {"side", 1}, {"broken", 1}}));
  EXPECT_EQ(JournalCounts(j), attempts);
  const v1::Stage* b = FindStage(*run, "b");
  ASSERT_EQ(b->attempts_size(), 2);
  EXPECT_EQ(b->attempts(0).reason(), "exit 3");
  EXPECT_EQ(b->attempts(1).exit_code(), 0);

  // A stage that succeeded cannot be retried; an unknown one is "not found".
  CommandResult again = cluster().Cli({"retry", std::to_string(id), "a"});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  CommandResult unknown = cluster().Cli({"retry", std::to_string(id), "nope"});
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
}

}  // namespace
}  // namespace longhaul::testing

// `longhaul logs -f` across an agent restart: the log stays on the node, the CLI waits while
// the agent is away and goes on where it stopped, so every line arrives once, in order.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <sstream>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

constexpr int kLines = 50;  // one every 100 ms

class LogsFollowTest : public FaultTest {};

std::vector<std::string> StageLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (StartsWith(line, "line ")) out.push_back(line);
  }
  return out;
}

TEST_F(LogsFollowTest, FollowsTheLogAcrossAnAgentRestart) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions(1, "10s")));
  std::string script = StrCat("i=1; while [ $i -le ", kLines,
                              " ]; do echo \"line $i\"; i=$((i+1)); sleep 0.1; done");
  Result<int64_t> id = cluster().Submit(
      "name: logs\nstages:\n" +
      StageYaml("talk", JournaledScript(cluster().dir().Join("journal.txt"), script)));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> running = cluster().WaitForRun(*id, [](const v1::Run& r) {
    const v1::Attempt* a = FindAttempt(r, "talk", 1);
    return a != nullptr && a->state() == v1::ATTEMPT_RUNNING;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();

  std::unique_ptr<Subprocess> follow =
      cluster().StartCli({"logs", std::to_string(*id), "talk", "-f"}, "logs");
  ASSERT_NE(follow, nullptr);
  std::string out_path = cluster().dir().Join("logs/cli-logs.log");
  ASSERT_TRUE(WaitFor([&] { return StageLines(ReadTextFile(out_path)).size() >= 5; }, 20'000))
      << ReadTextFile(out_path);

  cluster().KillAgent(0, SIGKILL);
  // The CLI notices (the coordinator answers UNAVAILABLE) before the agent is back.
  EXPECT_TRUE(WaitFor(
      [&] { return ReadTextFile(out_path).find("is not connected") != std::string::npos; }, 10'000))
      << ReadTextFile(out_path);
  size_t while_away = StageLines(ReadTextFile(out_path)).size();
  Status st = cluster().RestartAgent(0);
  ASSERT_TRUE(st.ok()) << st.message();

  std::optional<int> status = follow->Wait(30'000);
  ASSERT_TRUE(status.has_value()) << "logs -f did not end with the attempt\n"
                                  << ReadTextFile(out_path);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  std::string out = ReadTextFile(out_path);
  std::vector<std::string> expected;
  for (int i = 1; i <= kLines; ++i) expected.push_back(StrCat("line ", i));
  EXPECT_EQ(StageLines(out), expected) << out;
  EXPECT_LT(while_away, expected.size()) << "the stage had ended before the agent came back";
  EXPECT_NE(out.find("longhaul: reading the log again"), std::string::npos) << out;

  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
}

}  // namespace
}  // namespace longhaul::testing

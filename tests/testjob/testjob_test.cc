// lh-testjob runs as a real process here, as the agent and the benchmarks run it.
#include <gtest/gtest.h>
#include <signal.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/strings.h"
#include "tests/testing/test_util.h"
#include "tests/testjob/testjob_options.h"

namespace longhaul::testjob {
namespace {

using longhaul::testing::ReadTextFile;
using longhaul::testing::RunCommand;
using longhaul::testing::SplitLines;
using longhaul::testing::TempDir;

class TestJobTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string> Env(int attempt = 1, bool resume = false) {
    return {{"LONGHAUL_EVENTS", dir_.Join("events.jsonl")},
            {"LONGHAUL_OUTPUT_DIR", dir_.Join("out")},
            {"LONGHAUL_WORK_DIR", dir_.Join("work")},
            {"LONGHAUL_ATTEMPT", std::to_string(attempt)},
            {"LONGHAUL_RESUME", resume ? "1" : "0"}};
  }
  testing::CommandResult Run(std::vector<std::string> args,
                             const std::map<std::string, std::string>& env) {
    args.insert(args.begin(), testing::BinPath("lh-testjob"));
    return RunCommand(args, env, 30'000);
  }
  std::vector<StageEvent> Events(int* malformed = nullptr) {
    std::vector<StageEvent> out;
    for (const auto& line : SplitLines(ReadTextFile(dir_.Join("events.jsonl")))) {
      auto ev = ParseEventLine(line);
      if (ev.ok()) {
        out.push_back(*ev);
      } else if (malformed != nullptr) {
        ++*malformed;
      }
    }
    return out;
  }
  TempDir dir_;
};

TEST(TestJobOptionsTest, RejectsUnknownFlagsAndBadValuesByName) {
  auto r = ParseTestJobArgs({"--sleep", "abc"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--sleep 'abc'"), absl::string_view::npos);
  r = ParseTestJobArgs({"--bogus"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--bogus"), absl::string_view::npos);
  r = ParseTestJobArgs({"--output", "novalue"});
  EXPECT_FALSE(r.ok());
  r = ParseTestJobArgs({"--exit"});
  EXPECT_FALSE(r.ok());
}

TEST(TestJobOptionsTest, AcceptsRepeatedAndInlineValues) {
  auto r = ParseTestJobArgs({"--print", "a", "--print=b", "--exit=3", "--ready"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->print, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_TRUE(r->ready);
}

TEST_F(TestJobTest, HelpListsEveryFlag) {
  auto r = Run({"--help"}, {});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--sleep", "--fail-first", "--work", "--spawn-children", "--ready",
                           "--malformed", "--stall-after", "--pid-file"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

TEST_F(TestJobTest, PrintsAndExitsWithTheCodeAsked) {
  auto r = Run({"--print", "hello", "--print", "world", "--stderr", "oops", "--exit", "7"}, Env());
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "hello\nworld\n");
  EXPECT_EQ(r.err, "oops\n");
}

TEST_F(TestJobTest, FailFirstFailsOnlyTheEarlyAttempts) {
  EXPECT_EQ(Run({"--fail-first", "2"}, Env(1)).exit_code, 1);
  EXPECT_EQ(Run({"--fail-first", "2", "--exit", "4"}, Env(2)).exit_code, 4);
  EXPECT_EQ(Run({"--fail-first", "2", "--exit", "4"}, Env(3)).exit_code, 4);
  EXPECT_EQ(Run({"--fail-first", "2"}, Env(3)).exit_code, 0);
}

TEST_F(TestJobTest, ReportsOutputsMetricsAndArtifactsThatExist) {
  auto r = Run({"--output", "endpoint=http://x:1", "--metric", "loss=0.5", "--artifact",
                "samples=data/samples.jsonl"},
               Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto events = Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, EventType::kOutput);
  EXPECT_EQ(events[0].text, "http://x:1");
  EXPECT_EQ(events[1].type, EventType::kMetric);
  EXPECT_EQ(events[1].value, 0.5);
  EXPECT_EQ(events[2].type, EventType::kArtifact);
  std::string content = ReadTextFile(dir_.Join("out/data/samples.jsonl"));
  EXPECT_FALSE(content.empty());
  EXPECT_EQ(events[2].bytes, static_cast<int64_t>(content.size()));
}

TEST_F(TestJobTest, ProgressAndFastEventsCountUp) {
  ASSERT_EQ(Run({"--progress", "4", "--sleep", "0.04", "--events", "1000"}, Env()).exit_code, 0);
  auto events = Events();
  ASSERT_EQ(events.size(), 1004u);
  EXPECT_EQ(events[999].done, 1000);
  EXPECT_EQ(events[1003].done, 4);
  EXPECT_EQ(events[1003].total, 4);
  EXPECT_EQ(events[1003].unit, "items");
}

TEST_F(TestJobTest, MalformedLinesSitAmongValidOnes) {
  ASSERT_EQ(Run({"--malformed", "3"}, Env()).exit_code, 0);
  int malformed = 0;
  auto events = Events(&malformed);
  EXPECT_EQ(malformed, 3);
  EXPECT_EQ(events.size(), 4u);
}

TEST_F(TestJobTest, ResumedWorkContinuesAfterTheCheckpoint) {
  ASSERT_EQ(Run({"--work", "4", "--step-ms", "1"}, Env(1)).exit_code, 0);
  // The second attempt is asked for more; it must not redo items 1..4.
  auto r = Run({"--work", "9", "--step-ms", "1", "--checkpoint-every", "2"}, Env(2, true));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(SplitLines(ReadTextFile(dir_.Join("out/done.txt"))),
            (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  int checkpoints = 0;
  for (const auto& ev : Events()) {
    if (ev.type == EventType::kCheckpoint) {
      ++checkpoints;
      EXPECT_EQ(ev.path, "checkpoint.txt");
    }
  }
  // First run: 4 (every item); second: 6, 8 and the last item 9.
  EXPECT_EQ(checkpoints, 7);
  EXPECT_EQ(ReadTextFile(dir_.Join("out/checkpoint.txt")), "9\n");
}

TEST_F(TestJobTest, ResumeDropsItemsPastTheCheckpoint) {
  // As if killed after appending items 4 and 5 but before checkpointing them.
  ASSERT_EQ(Run({"--work", "3", "--step-ms", "1"}, Env(1)).exit_code, 0);
  testing::WriteTextFile(dir_.Join("out/done.txt"), "1\n2\n3\n4\n5\n");
  auto r = Run({"--work", "6", "--step-ms", "1"}, Env(2, true));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming after item 3"), std::string::npos) << r.err;
  EXPECT_EQ(SplitLines(ReadTextFile(dir_.Join("out/done.txt"))),
            (std::vector<std::string>{"1", "2", "3", "4", "5", "6"}));
}

TEST_F(TestJobTest, WorkWithoutResumeStartsOver) {
  ASSERT_EQ(Run({"--work", "2"}, Env(1)).exit_code, 0);
  ASSERT_EQ(Run({"--work", "2"}, Env(2, false)).exit_code, 0);
  EXPECT_EQ(SplitLines(ReadTextFile(dir_.Join("out/done.txt"))),
            (std::vector<std::string>{"1", "2", "1", "2"}));
}

TEST_F(TestJobTest, SpawnedChildrenLiveUntilKilled) {
  auto r = Run({"--spawn-children", "3", "--pid-file", dir_.Join("main.pid")}, Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto pids = SplitLines(ReadTextFile(dir_.Join("work/children.pids")));
  ASSERT_EQ(pids.size(), 3u);
  for (const auto& p : pids) {
    pid_t pid = std::stoi(p);
    EXPECT_TRUE(testing::ProcessAlive(pid)) << pid;
    ::kill(pid, SIGKILL);
  }
  EXPECT_FALSE(ReadTextFile(dir_.Join("main.pid")).empty());
}

TEST_F(TestJobTest, ReadyServiceRunsUntilSigterm) {
  auto env = Env();
  auto proc = testing::Subprocess::Start({testing::BinPath("lh-testjob"), "--ready"}, env);
  ASSERT_TRUE(proc.ok()) << proc.status();
  ASSERT_TRUE(testing::WaitFor([&] { return !Events().empty(); }, 10'000));
  EXPECT_EQ(Events()[0].type, EventType::kReady);
  EXPECT_TRUE((*proc)->Running());
  (*proc)->Signal(SIGTERM);
  auto status = (*proc)->Wait(10'000);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*status));
}

}  // namespace
}  // namespace longhaul::testjob

// Stages that stop making progress or are killed midway: a stalled attempt is stopped and
// retried; a resumable stage's next attempt continues from its checkpoint and finished work is
// not done again.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

class ProgressTest : public FaultTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }
};

// "1\n2\n...\nn\n"
std::string Items(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += StrCat(i, "\n");
  return out;
}

// The item lh-testjob said it resumed after, from an attempt's stderr; -1 when it did not.
int64_t ResumedAfter(const std::string& stderr_log) {
  std::smatch m;
  static const std::regex re("resuming after item ([0-9]+)");
  if (!std::regex_search(stderr_log, m, re)) return -1;
  return std::stoll(m[1].str());
}

TEST_F(ProgressTest, StalledAttemptIsStoppedAndRetried) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions()));
  // Attempt 1 reports for a second, then stays alive and silent; attempt 2 behaves.
  std::string script =
      "if [ \"$LONGHAUL_ATTEMPT\" = 1 ]; then exec lh-testjob --stall-after 1; fi; "
      "exec lh-testjob --progress 5 --sleep 1";
  Result<int64_t> id = cluster().Submit(
      "name: stall\nstages:\n" + StageYaml("slow", JournaledScript(Journal(), script), {},
                                           {"stall_timeout: 2s", "grace: 2s",
                                            "retry: {limit: 1, backoff: 100ms, on: [stalled]}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Stage* s = FindStage(*run, "slow");
  ASSERT_EQ(s->attempts_size(), 2) << DescribeRun(*run);
  const v1::Attempt& stalled = s->attempts(0);
  EXPECT_EQ(stalled.state(), v1::ATTEMPT_KILLED);
  EXPECT_TRUE(StartsWith(stalled.reason(), "stalled")) << stalled.reason();
  EXPECT_NE(stalled.reason().find("no progress for 2s"), std::string::npos) << stalled.reason();
  EXPECT_GT(stalled.events(), 3) << "it reported progress before it stalled";
  EXPECT_EQ(s->attempts(1).state(), v1::ATTEMPT_EXITED);
  EXPECT_EQ(s->attempts(1).exit_code(), 0);
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"slow", 2}}));
}

// Param: how the first attempt is ended midway: SIGKILL of its stage process, or its timeout.
class ResumeTest : public ProgressTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ResumeTest, NextAttemptContinuesFromTheCheckpoint) {
  bool by_timeout = GetParam();
  constexpr int kItems = 40;  // 100 ms each: 4 s of work in all
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions()));
  std::vector<std::string> extra = {"resume: true", "grace: 2s"};
  if (by_timeout) {
    extra.push_back("timeout: 3s");
    // On a loaded machine a second attempt may time out too; each one still moves on.
    extra.push_back("retry: {limit: 3, backoff: 100ms, on: [timeout]}");
  } else {
    extra.push_back("retry: {limit: 1, backoff: 100ms, on: [signal]}");
  }
  Result<int64_t> id = cluster().Submit(
      "name: resume\nstages:\n" +
      StageYaml("gen",
                JournaledRun(Journal(), {"--work", std::to_string(kItems), "--step-ms", "100"}), {},
                extra) +
      StageYaml("after", JournaledRun(Journal(), {}), {"gen"}));
  ASSERT_TRUE(id.ok()) << id.status().message();

  Result<v1::Run> running = cluster().WaitForRun(*id, [](const v1::Run& r) {
    const v1::Attempt* a = FindAttempt(r, "gen", 1);
    return a != nullptr && a->state() == v1::ATTEMPT_RUNNING && a->pid() > 0;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();
  const v1::Attempt first = *FindAttempt(*running, "gen", 1);
  std::string done_txt = first.output_dir() + "/done.txt";
  size_t before_kill = 0;
  if (!by_timeout) {
    ASSERT_TRUE(WaitFor([&] { return NonBlankLines(done_txt, nullptr).size() >= 10; }, 20'000));
    ASSERT_EQ(::kill(static_cast<pid_t>(first.pid()), SIGKILL), 0);
    before_kill = 10;
  }

  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 40'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Stage* gen = FindStage(*run, "gen");
  int n = gen->attempts_size();
  if (by_timeout) {
    ASSERT_GE(n, 2) << DescribeRun(*run);
  } else {
    ASSERT_EQ(n, 2) << DescribeRun(*run);
  }
  // Every item exactly once, in order: no attempt redid what an earlier one had finished.
  EXPECT_EQ(ReadTextFile(done_txt), Items(kItems));
  // A kill can land between an item and its checkpoint: then that one item is done again.
  int64_t least = by_timeout ? 1 : static_cast<int64_t>(before_kill) - 1;
  for (int i = 0; i < n; ++i) {
    const v1::Attempt& a = gen->attempts(i);
    std::string err = ReadTextFile(AttemptDirOf(cluster(), a) + "/stderr.log");
    EXPECT_EQ(a.output_dir(), first.output_dir()) << "a resumable stage keeps its output dir";
    if (i + 1 < n) {
      EXPECT_EQ(a.state(), v1::ATTEMPT_KILLED) << DescribeRun(*run);
      EXPECT_TRUE(StartsWith(a.reason(), by_timeout ? "timeout" : "signal 9")) << a.reason();
    } else {
      EXPECT_EQ(a.state(), v1::ATTEMPT_EXITED) << DescribeRun(*run);
    }
    if (i == 0) {
      EXPECT_EQ(ResumedAfter(err), -1) << err;
      EXPECT_EQ(a.checkpoint(), "");
      continue;
    }
    // Given the last checkpoint (LONGHAUL_CHECKPOINT), it went on from there.
    EXPECT_EQ(a.checkpoint(), first.output_dir() + "/checkpoint.txt");
    int64_t resumed_after = ResumedAfter(err);
    EXPECT_GE(resumed_after, least) << "attempt " << a.number() << ": " << err;
    EXPECT_LT(resumed_after, kItems) << err;
    least = resumed_after;  // never back before a checkpoint
  }
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"gen", n}, {"after", 1}}));
}

INSTANTIATE_TEST_SUITE_P(KilledBy, ResumeTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Timeout" : "Sigkill"; });

}  // namespace
}  // namespace longhaul::testing

// An agent that goes silent (SIGSTOP: its stream stays open, nothing arrives): shorter than
// lost_after and nothing moves; longer and the attempt is lost and retried on another agent,
// and when the old agent comes back its stale attempt is stopped and only one result counts.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

class PartitionTest : public FaultTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }

  // `work` reports progress for `seconds` (`first_seconds` in its first attempt, when given),
  // then outputs which attempt it was; `report` needs it and prints that output.
  int64_t Submit(int seconds, int first_seconds = 0) {
    std::string j = Journal();
    if (first_seconds == 0) first_seconds = seconds;
    std::string script =
        StrCat("s=", seconds, "; if [ \"$LONGHAUL_ATTEMPT\" = 1 ]; then s=", first_seconds,
               "; fi; lh-testjob --progress $((s * 5)) --sleep $s",
               " && exec lh-testjob --output \"attempt=$LONGHAUL_ATTEMPT\"");
    Result<int64_t> id = cluster().Submit(
        "name: partition\nstages:\n" +
        StageYaml("work", JournaledScript(j, script), {},
                  {"retry: {limit: 2, backoff: 100ms, on: [lost]}", "grace: 2s"}) +
        StageYaml("report", JournaledRun(j, {"--print", "from attempt ${work.outputs.attempt}"}),
                  {"work"}));
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : 0;
  }

  int AgentIndex(const std::string& id) {
    for (int i = 0; i < cluster().agent_count(); ++i) {
      if (cluster().AgentId(i) == id) return i;
    }
    ADD_FAILURE() << "no agent " << id;
    return 0;
  }

  v1::Attempt WaitRunning(int64_t id, int number) {
    Result<v1::Run> run = cluster().WaitForRun(
        id,
        [&](const v1::Run& r) {
          const v1::Attempt* a = FindAttempt(r, "work", number);
          return a != nullptr && a->state() == v1::ATTEMPT_RUNNING && a->pid() > 0;
        },
        30'000);
    EXPECT_TRUE(run.ok()) << run.status().message();
    return run.ok() ? *FindAttempt(*run, "work", number) : v1::Attempt();
  }
};

TEST_F(PartitionTest, SilenceShorterThanLostAfterReschedulesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions(2, "6s")));
  int64_t id = Submit(6);
  v1::Attempt a = WaitRunning(id, 1);
  ASSERT_GT(a.pid(), 0);
  int agent = AgentIndex(a.agent_id());

  cluster().SuspendAgent(agent);
  // Past agent_timeout the attempt is unknown, not failed; well before lost_after it resumes.
  Result<v1::Run> unknown = cluster().WaitForRun(id, [](const v1::Run& r) {
    return FindAttempt(r, "work", 1)->state() == v1::ATTEMPT_UNKNOWN;
  });
  cluster().ResumeAgent(agent);
  ASSERT_TRUE(unknown.ok()) << unknown.status().message();
  EXPECT_EQ(FindStage(*unknown, "work")->attempt_count(), 1);
  EXPECT_TRUE(ProcessAlive(static_cast<pid_t>(a.pid())));

  Result<v1::Run> run = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Stage* work = FindStage(*run, "work");
  ASSERT_EQ(work->attempts_size(), 1) << DescribeRun(*run);
  EXPECT_EQ(work->attempts(0).state(), v1::ATTEMPT_EXITED);
  EXPECT_EQ(work->attempts(0).pid(), a.pid());
  EXPECT_EQ(work->attempts(0).agent_id(), a.agent_id());
  EXPECT_EQ(work->outputs().at("attempt"), "1");
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"work", 1}, {"report", 1}}));
}

TEST_F(PartitionTest, SilenceLongerThanLostAfterRetriesElsewhereAndFencesTheStaleAttempt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions(2, "3s")));
  int64_t id = Submit(8);
  v1::Attempt first = WaitRunning(id, 1);
  ASSERT_GT(first.pid(), 0);
  pid_t stale_pid = static_cast<pid_t>(first.pid());
  int old_agent = AgentIndex(first.agent_id());

  cluster().SuspendAgent(old_agent);
  v1::Attempt second = WaitRunning(id, 2);
  ASSERT_GT(second.pid(), 0);
  EXPECT_NE(second.agent_id(), first.agent_id()) << "retried on the agent that is away";
  Result<v1::Run> lost = cluster().GetRun(id);
  ASSERT_TRUE(lost.ok()) << lost.status().message();
  EXPECT_EQ(FindAttempt(*lost, "work", 1)->state(), v1::ATTEMPT_LOST) << DescribeRun(*lost);
  EXPECT_TRUE(StartsWith(FindAttempt(*lost, "work", 1)->reason(), "lost"))
      << FindAttempt(*lost, "work", 1)->reason();
  // The stage on the silent node did not notice: both run now.
  EXPECT_TRUE(ProcessAlive(stale_pid));

  cluster().ResumeAgent(old_agent);
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(stale_pid); }, 20'000))
      << "the stale attempt still runs after its agent came back";
  EXPECT_TRUE(ProcessAlive(static_cast<pid_t>(second.pid())));

  Result<v1::Run> run = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Stage* work = FindStage(*run, "work");
  ASSERT_EQ(work->attempts_size(), 2) << DescribeRun(*run);
  EXPECT_EQ(work->attempts(0).state(), v1::ATTEMPT_LOST) << DescribeRun(*run);
  EXPECT_EQ(work->attempts(1).state(), v1::ATTEMPT_EXITED) << DescribeRun(*run);
  EXPECT_EQ(work->attempts(1).exit_code(), 0);
  // Only the second attempt's result counts, and the dependent saw it.
  EXPECT_EQ(work->outputs().at("attempt"), "2");
  const v1::Stage* report = FindStage(*run, "report");
  ASSERT_EQ(report->attempts_size(), 1);
  EXPECT_NE(std::find(report->attempts(0).argv().begin(), report->attempts(0).argv().end(),
                      "from attempt 2"),
            report->attempts(0).argv().end());
  EXPECT_GE(report->attempts(0).started_at_ms(), work->attempts(1).ended_at_ms());
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"work", 2}, {"report", 1}}));
}

// The node stays away until the run has ended without it: the coordinator no longer holds the
// run in memory when the stale attempt's events and exit arrive, and still keeps them in that
// attempt's history (FaultTest's check: every line of its events.jsonl stored once).
TEST_F(PartitionTest, NodeBackAfterTheRunEndedStopsTheStaleAttemptAndKeepsItsHistory) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions(2, "3s")));
  int64_t id = Submit(2, 30);  // the stale attempt outlives the run
  v1::Attempt first = WaitRunning(id, 1);
  ASSERT_GT(first.pid(), 0);
  pid_t stale_pid = static_cast<pid_t>(first.pid());
  int old_agent = AgentIndex(first.agent_id());
  std::string stale_dir = AttemptDirOf(cluster(), first);

  cluster().SuspendAgent(old_agent);
  Result<v1::Run> run = cluster().WaitForRunEnd(id, 40'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  EXPECT_TRUE(ProcessAlive(stale_pid)) << "the stage on the silent node ended by itself";
  size_t written_while_away = NonBlankLines(stale_dir + "/events.jsonl", nullptr).size();

  cluster().ResumeAgent(old_agent);
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(stale_pid); }, 20'000))
      << "the stale attempt still runs after its agent came back";
  EXPECT_TRUE(WaitFor([&] { return std::filesystem::exists(stale_dir + "/done"); }, 20'000));

  Result<v1::Run> after = cluster().GetRun(id);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->status(), v1::RUN_SUCCEEDED);
  const v1::Stage* work = FindStage(*after, "work");
  ASSERT_EQ(work->attempts_size(), 2) << DescribeRun(*after);
  EXPECT_EQ(work->outputs().at("attempt"), "2");
  const v1::Attempt& stale = work->attempts(0);
  EXPECT_EQ(stale.state(), v1::ATTEMPT_LOST);
  EXPECT_NE(stale.reason().find("it ended later on"), std::string::npos) << stale.reason();
  EXPECT_GE(stale.events(), static_cast<int64_t>(written_while_away));
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"work", 2}, {"report", 1}}));
}

}  // namespace
}  // namespace longhaul::testing

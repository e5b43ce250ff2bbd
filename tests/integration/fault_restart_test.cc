// Daemons die mid-attempt: the stage goes on, the attempt is recorded once, its dependents
// start once. SIGKILL of longhauld, of the agent, and of both; the stage's own process is
// never restarted (its pid and the journal say so).
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

constexpr int kSteps = 40;  // progress events, one every 200 ms: 8 s of stage time

class RestartTest : public FaultTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }

  // `long` reports progress for 8 s; `after_a` and `after_b` need it.
  int64_t SubmitLongWithDependents() {
    std::string j = Journal();
    Result<int64_t> id = cluster().Submit(
        "name: restart\nstages:\n" +
        StageYaml("long", JournaledRun(j, {"--progress", std::to_string(kSteps), "--sleep", "8"})) +
        StageYaml("after_a", JournaledRun(j, {"--print", "a"}), {"long"}) +
        StageYaml("after_b", JournaledRun(j, {"--print", "b"}), {"long"}));
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : 0;
  }

  // Waits until `long` runs with a pid and has reported some progress.
  v1::Attempt WaitLongRunning(int64_t id) {
    Result<v1::Run> run = cluster().WaitForRun(id, [](const v1::Run& r) {
      const v1::Attempt* a = FindAttempt(r, "long", 1);
      return a != nullptr && a->state() == v1::ATTEMPT_RUNNING && a->pid() > 0 &&
             FindStage(r, "long")->progress().done() >= 3;
    });
    EXPECT_TRUE(run.ok()) << run.status().message();
    return run.ok() ? *FindAttempt(*run, "long", 1) : v1::Attempt();
  }

  // A one-agent cluster, SubmitLongWithDependents, and `long` running: its run, attempt,
  // stage pid, attempt dir and the events written so far.
  struct LongStage {
    int64_t run_id = 0;
    v1::Attempt attempt;
    pid_t pid = 0;
    std::string dir;
    size_t events = 0;
  };
  void StartLongStage(LongStage* out) {
    ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions(1, "10s")));
    out->run_id = SubmitLongWithDependents();
    out->attempt = WaitLongRunning(out->run_id);
    ASSERT_GT(out->attempt.pid(), 0);
    out->pid = static_cast<pid_t>(out->attempt.pid());
    out->dir = AttemptDirOf(cluster(), out->attempt);
    out->events = NonBlankLines(out->dir + "/events.jsonl", nullptr).size();
  }

  // Waits until the stage has written `more` events beyond `from`: it works on while a daemon
  // is down.
  bool StageWritesOn(const std::string& dir, size_t from, size_t more) {
    return WaitFor(
        [&] { return NonBlankLines(dir + "/events.jsonl", nullptr).size() >= from + more; },
        10'000);
  }

  // The run succeeded; `long` ran once, as `pid`, and each dependent ran once, after it.
  void ExpectRecordedOnce(int64_t id, pid_t pid) {
    Result<v1::Run> run = cluster().WaitForRunEnd(id, 40'000);
    ASSERT_TRUE(run.ok()) << run.status().message();
    ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
    const v1::Stage* s = FindStage(*run, "long");
    ASSERT_EQ(s->attempts_size(), 1) << DescribeRun(*run);
    EXPECT_EQ(s->attempt_count(), 1);
    const v1::Attempt& a = s->attempts(0);
    EXPECT_EQ(a.state(), v1::ATTEMPT_EXITED) << DescribeRun(*run);
    EXPECT_EQ(a.exit_code(), 0);
    EXPECT_EQ(a.pid(), pid) << "the attempt's stage process changed";
    EXPECT_EQ(s->progress().done(), kSteps);
    EXPECT_EQ(a.events(), kSteps);
    for (const char* dep : {"after_a", "after_b"}) {
      const v1::Stage* d = FindStage(*run, dep);
      ASSERT_EQ(d->attempts_size(), 1) << dep << "\n" << DescribeRun(*run);
      EXPECT_EQ(d->status(), v1::STAGE_SUCCEEDED) << dep;
      EXPECT_GE(d->attempts(0).started_at_ms(), a.ended_at_ms()) << dep;
    }
    EXPECT_EQ(JournalCounts(Journal()),
              (std::map<std::string, int>{{"long", 1}, {"after_a", 1}, {"after_b", 1}}));
  }
};

// Param: whether the stage ends while longhauld is down (its exit then waits on the agent).
class CoordinatorRestartTest : public RestartTest, public ::testing::WithParamInterface<bool> {};

TEST_P(CoordinatorRestartTest, AttemptFinishesOnceAndDependentsStartOnce) {
  bool end_while_down = GetParam();
  LongStage started;
  ASSERT_NO_FATAL_FAILURE(StartLongStage(&started));
  auto& [id, a, pid, dir, events] = started;

  cluster().KillCoordinator(SIGKILL);
  ASSERT_FALSE(cluster().CoordinatorRunning());
  EXPECT_TRUE(StageWritesOn(dir, events, 5)) << "the stage stopped with the coordinator";
  if (end_while_down) {
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir + "/exit.json"); }, 20'000));
    EXPECT_FALSE(std::filesystem::exists(dir + "/done"));
  } else {
    EXPECT_TRUE(ProcessAlive(pid));
  }
  Status st = cluster().RestartCoordinator();
  ASSERT_TRUE(st.ok()) << st.message();
  ExpectRecordedOnce(id, pid);
}

INSTANTIATE_TEST_SUITE_P(StageEnds, CoordinatorRestartTest, ::testing::Values(false, true),
                         [](const auto& info) {
                           return info.param ? "WhileDown" : "AfterRestart";
                         });

TEST_F(RestartTest, KilledAgentReadoptsTheAttemptWithTheSamePid) {
  LongStage started;
  ASSERT_NO_FATAL_FAILURE(StartLongStage(&started));
  auto& [id, a, pid, dir, events] = started;

  cluster().KillAgent(0, SIGKILL);
  ASSERT_FALSE(cluster().AgentRunning(0));
  ASSERT_TRUE(ProcessAlive(pid)) << "the stage died with its agent";
  EXPECT_TRUE(StageWritesOn(dir, events, 3));
  Status st = cluster().RestartAgent(0);
  ASSERT_TRUE(st.ok()) << st.message();
  Result<v1::Run> adopted = cluster().WaitForRun(id, [&](const v1::Run& r) {
    const v1::Attempt* x = FindAttempt(r, "long", 1);
    return x != nullptr && x->state() == v1::ATTEMPT_RUNNING && x->pid() == pid;
  });
  EXPECT_TRUE(adopted.ok()) << adopted.status().message();
  EXPECT_TRUE(ProcessAlive(pid));
  ExpectRecordedOnce(id, pid);
  std::string log = ReadTextFile(cluster().dir().Join("logs/agent-n0.log"));
  EXPECT_NE(log.find(StrCat("attempt ", a.id(), ": found in the state dir: running")),
            std::string::npos)
      << "the restarted agent did not say it adopted the attempt";
}

TEST_F(RestartTest, BothDaemonsKilledAndRestarted) {
  LongStage started;
  ASSERT_NO_FATAL_FAILURE(StartLongStage(&started));
  auto& [id, a, pid, dir, events] = started;

  cluster().KillAgent(0, SIGKILL);
  cluster().KillCoordinator(SIGKILL);
  ASSERT_TRUE(ProcessAlive(pid));
  EXPECT_TRUE(StageWritesOn(dir, events, 3));
  // The agent first: it dials a coordinator that is not there yet, and keeps dialing.
  Status st = cluster().RestartAgent(0, /*wait_connected=*/false);
  ASSERT_TRUE(st.ok()) << st.message();
  // Up to here the agent re-adopts the attempt and dials in vain; nothing is lost meanwhile.
  EXPECT_TRUE(StageWritesOn(dir, events + 3, 3));
  st = cluster().RestartCoordinator();
  ASSERT_TRUE(st.ok()) << st.message();
  ExpectRecordedOnce(id, pid);
}

}  // namespace
}  // namespace longhaul::testing

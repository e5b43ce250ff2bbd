// A stop in flight across a longhauld restart (docs/scheduling.md, "How a preempted attempt
// stops and comes back"): the scheduler is rebuilt on the same SQLite file while a victim is
// stopping; it still ends `preempted` with its reason and spends an infrastructure retry, and the
// waiting stage keeps the room it frees. The same for a stop of another kind (a stall).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/daemon/scheduler/preemption_fixture.h"

namespace longhaul::scheduler {
namespace {

class PreemptionRestartTest : public PreemptionTest {
 protected:
  static v1::OwnedAttempt Owned(int64_t id, bool running) {
    v1::OwnedAttempt o;
    o.set_attempt_id(id);
    o.set_running(running);
    o.set_exited(!running);
    return o;
  }
  static std::string OneGpuStage(const std::string& name) {
    return StrCat("name: ", name, "\nstages:\n  ", name,
                  ":\n    run: [train]\n    resources: {gpus: 1, cpus: 1}\n");
  }
  // A low run's stage runs on a1's only GPU, a high run's stage preempts it; returns the ids.
  struct Scene {
    uint64_t session = 0;
    int64_t low = 0, high = 0, victim = 0;
  };
  Scene PreemptOne() {
    Scene sc;
    sc.session = Connect("a1", 4, 1);
    sc.low = Submit(OneGpuStage("train"), {}, "low");
    sc.victim = TakeStartedIds().at("train");
    Started(sc.session, sc.victim);
    Pass(sc.session, 60'000);
    sc.high = Submit(OneGpuStage("eval"), {}, "high");
    std::vector<v1::StartAttempt> starts;
    std::vector<v1::CancelAttempt> cancels;
    Take(&starts, &cancels);
    EXPECT_TRUE(starts.empty());
    EXPECT_EQ(cancels.size(), 1u);
    return sc;
  }
  std::string Why(const Scene& sc) const {
    return StrCat("room for run ", sc.high, " stage eval (high)");
  }
  // What the victim ended with, once it has: stopped for the high stage, with one
  // infrastructure retry spent and none of its own, and the high stage started in its room.
  void ExpectEndedPreempted(const Scene& sc, const std::vector<v1::StartAttempt>& starts) {
    ASSERT_EQ(starts.size(), 1u) << "the waiting stage takes the freed GPU";
    EXPECT_EQ(starts[0].stage(), "eval");
    const StageState* train = Stage(sc.low, "train");
    ASSERT_NE(train, nullptr) << "its run ended";
    EXPECT_EQ(train->row.status, v1::STAGE_READY) << "back in the queue, not failed";
    EXPECT_EQ(train->row.infra_retries_used, 1);
    EXPECT_EQ(train->row.retries_used, 0);
    v1::Stage stored = GetStage(sc.low, "train");
    ASSERT_EQ(stored.attempts_size(), 1);
    EXPECT_EQ(stored.attempts(0).state(), v1::ATTEMPT_KILLED);
    EXPECT_EQ(stored.attempts(0).reason(),
              StrCat("preempted: ", Why(sc), "; 1.0 GPU-min after its start"));
  }
};

TEST_F(PreemptionRestartTest, TheStopIsStoredWithTheBatchThatSendsIt) {
  clock_.SetMs(1'000'000);
  Scene sc = PreemptOne();
  Result<store::AttemptRow> row = store_->LoadAttemptById(sc.victim);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->stop_kind, "preempted");
  EXPECT_EQ(row->stop_reason, Why(sc));
  EXPECT_EQ(row->stop_at_ms, std::optional<int64_t>(1'060'000));
  EXPECT_EQ(row->stop_for_stage_id, std::optional<int64_t>(Stage(sc.high, "eval")->row.id));
}

TEST_F(PreemptionRestartTest, AVictimThatEndsAfterARestartEndsPreemptedAndItsRoomIsHeld) {
  Scene sc = PreemptOne();
  NewScheduler();
  uint64_t again = Connect("a1", 4, 1, {Owned(sc.victim, /*running=*/true)});
  std::vector<v1::StartAttempt> starts;
  std::vector<v1::CancelAttempt> cancels;
  Take(&starts, &cancels);
  ASSERT_EQ(cancels.size(), 1u) << "the stop is asked again of the reconnected agent";
  EXPECT_EQ(cancels[0].attempt_id(), sc.victim);
  EXPECT_EQ(cancels[0].reason(), "preempted");
  EXPECT_EQ(Stage(sc.high, "eval")->row.reason.str(),
            StrCat("waiting for an agent with 1 cpus, 1 GPUs free; preempting run ", sc.low,
                   " stage train (low) on a1 for its room"));
  // Another stage that becomes ready meanwhile does not take the room being made.
  cancels.clear();
  int64_t other = Submit(OneGpuStage("other"), {}, "normal");
  Take(&starts, &cancels);
  EXPECT_TRUE(starts.empty());
  EXPECT_TRUE(cancels.empty()) << "no second decision: the first still stops";

  Exit(again, sc.victim, 143, 15);
  Take(&starts, &cancels);
  ExpectEndedPreempted(sc, starts);
  EXPECT_EQ(Stage(other, "other")->row.status, v1::STAGE_READY);
  // One decision, recorded once: the restart did not choose the victim again.
  v1::ListAuditRequest req;
  Result<v1::ListAuditResponse> audit = store_->ListAudit(req);
  ASSERT_TRUE(audit.ok()) << audit.status();
  int decisions = 0;
  for (const v1::AuditEntry& e : audit->entries()) decisions += e.action() == "PreemptAttempt";
  EXPECT_EQ(decisions, 1);
}

TEST_F(PreemptionRestartTest, AVictimThatEndedWhileLonghauldWasDownEndsPreempted) {
  Scene sc = PreemptOne();
  NewScheduler();
  // The agent stopped it meanwhile: its Hello says so, and AttemptExited follows.
  uint64_t again = Connect("a1", 4, 1, {Owned(sc.victim, /*running=*/false)});
  std::vector<v1::StartAttempt> starts;
  std::vector<v1::CancelAttempt> cancels;
  Take(&starts, &cancels);
  EXPECT_TRUE(cancels.empty()) << "it no longer runs: nothing to stop";
  Exit(again, sc.victim, 143, 15);
  Take(&starts, &cancels);
  ExpectEndedPreempted(sc, starts);
}

TEST_F(PreemptionRestartTest, ARestartWithNoStopAskedStillEndsBySignal) {
  uint64_t sess = Connect("a1", 4, 1);
  int64_t run = Submit(OneGpuStage("train"), {}, "low");
  int64_t id = TakeStartedIds().at("train");
  Started(sess, id);
  NewScheduler();
  uint64_t again = Connect("a1", 4, 1, {Owned(id, /*running=*/true)});
  EXPECT_TRUE(TakeCancels().empty());
  Exit(again, id, 143, 15);
  v1::Stage stored = GetStage(run, "train");
  ASSERT_GE(stored.attempts_size(), 1);
  EXPECT_EQ(stored.attempts(0).state(), v1::ATTEMPT_KILLED);
  EXPECT_EQ(stored.attempts(0).reason(), "signal 15 (SIGTERM)");
  EXPECT_EQ(GetRun(run).status(), v1::RUN_FAILED) << "its own failure: no retry is left";
}

// A stop whose cause recovery does not see again: a stall (an attempt loaded at a restart has
// its progress clock started anew). Without the stored stop it would end by the signal alone.
TEST_F(PreemptionRestartTest, AStallStopAskedBeforeARestartEndsAsAStall) {
  uint64_t sess = Connect("a1", 4, 0);
  int64_t run = Submit("name: t\nstages:\n  train:\n    run: [train]\n    stall_timeout: 1m\n");
  int64_t id = TakeStartedIds().at("train");
  Started(sess, id);
  Pass(sess, 65'000);
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason(), "stalled");
  NewScheduler();
  uint64_t again = Connect("a1", 4, 0, {Owned(id, /*running=*/true)});
  cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u) << "asked again of the reconnected agent";
  EXPECT_EQ(cancels[0].reason(), "stalled");
  Exit(again, id, 143, 15);
  v1::Stage stored = GetStage(run, "train");
  ASSERT_GE(stored.attempts_size(), 1);
  EXPECT_EQ(stored.attempts(0).state(), v1::ATTEMPT_KILLED);
  EXPECT_EQ(stored.attempts(0).reason(), "stalled: no progress for 1m00s");
}

}  // namespace
}  // namespace longhaul::scheduler

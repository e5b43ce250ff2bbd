// Preemption under quotas, on a scheduler with a real store and a fake clock (docs/scheduling.md,
// "Preemption" and "Borrowed GPUs"): a high stage that would borrow beyond its team's guarantee
// stops no attempt within another team's guarantee (the quota would keep it waiting for that
// team's stopped stage, and the room would go back to it), and says so; a stage held for a team
// under its guarantee is judged again once that team reaches it in the same pass, so its reason
// never names a use that is no longer true.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

// A sweep of `items` one-GPU stages, as the shared-cluster trial's (docs/scheduling.md).
std::string QuotaPreemptSweep(int items) {
  std::string yaml = "name: sweep\nstages:\n";
  for (int i = 0; i < items; ++i) {
    yaml += StrCat("  train", i, ": {run: [prog], resume: true, resources: {gpus: 1}}\n");
  }
  return yaml;
}

constexpr char kUrgentTwoGpus[] =
    "name: urgent\nstages:\n"
    "  eval: {run: [prog], resources: {gpus: 2}}\n";

class QuotaPreemptTest : public SchedulerTest {
 protected:
  void SetUp() override {
    Result<Quotas> q =
        Quotas::Parse({"team:vision=gpus:1,borrow:2", "team:speech=gpus:1,borrow:2"});
    ASSERT_TRUE(q.ok()) << q.status();
    options_.quotas = *q;
    NewScheduler();
  }
  int64_t SubmitAs(const std::string& user, const std::string& team, const std::string& yaml,
                   const std::string& priority) {
    return SubmitWith(yaml, [&](SubmitInput* in) {
      in->user = user;
      in->team = team;
      in->priority = priority;
      in->no_cache = true;
    });
  }
  // Vision's low sweep of `items` on n1 (2 GPUs): its first two items run, one on a GPU
  // borrowed. Returns the run; `n1` and `started` get the session and the attempts by stage.
  int64_t SweepHoldsBothGpus(int items, uint64_t* n1, std::map<std::string, int64_t>* started) {
    int64_t sweep = SubmitAs("alice", "vision", QuotaPreemptSweep(items), "low");
    *n1 = Connect("n1", 8, 2);
    *started = TakeStartedIds();
    EXPECT_EQ(started->size(), 2u);
    for (const auto& [name, id] : *started) Started(*n1, id);
    EXPECT_EQ(scheduler_->BorrowedAttemptIds().size(), 1u);
    return sweep;
  }
};

TEST_F(QuotaPreemptTest, ABorrowingHighStageStopsNothingWithinAnotherTeamsGuarantee) {
  uint64_t n1 = 0;
  std::map<std::string, int64_t> started;
  int64_t sweep = SweepHoldsBothGpus(3, &n1, &started);
  ASSERT_EQ(started.size(), 2u);

  // Speech's high stage asks for 2 GPUs, one beyond speech's guarantee: it may stop vision's
  // borrowed attempt, but that frees one GPU, and stopping the other would leave vision under
  // its guarantee, which a borrowing stage waits for. So it stops neither, and says why.
  int64_t urgent = SubmitAs("carol", "speech", kUrgentTwoGpus, "high");
  EXPECT_TRUE(TakeCancels().empty());
  EXPECT_EQ(GetStage(urgent, "eval").reason(),
            "waiting for an agent with 1 cpus, 2 GPUs free; it would borrow beyond team speech's "
            "quota of 1 GPU, so it stops no attempt within team vision's guarantee");

  // The borrowed attempt ends: vision is at its guarantee, speech still cannot preempt.
  int64_t borrowed = scheduler_->BorrowedAttemptIds().at(0);
  Exit(n1, borrowed, 0);
  EXPECT_TRUE(TakeCancels().empty());
  EXPECT_TRUE(TakeStarts().empty()) << "vision's next item would borrow while speech waits";
  EXPECT_EQ(GetStage(sweep, "train2").reason(),
            "waiting: team vision at its quota of 1 GPU (1 in use); it borrows idle GPUs only "
            "while no one under their guarantee waits, and team speech does (0 of 1 in use)");
  EXPECT_EQ(GetRun(urgent).stages(0).status(), v1::STAGE_READY);
}

TEST_F(QuotaPreemptTest, AReasonNamingATeamUnderItsGuaranteeIsJudgedAgainWhenItReachesIt) {
  uint64_t n1 = 0;
  std::map<std::string, int64_t> started;
  int64_t sweep = SweepHoldsBothGpus(3, &n1, &started);
  ASSERT_EQ(started.size(), 2u);
  int64_t urgent = SubmitAs("carol", "speech", kUrgentTwoGpus, "high");
  for (const auto& [name, id] : started) Exit(n1, id, 0);

  // Both GPUs free, vision under its guarantee with train2 waiting: speech's stage, which
  // would borrow, waits for it, and train2 starts within vision's guarantee in the same pass.
  started = TakeStartedIds();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_TRUE(started.count("train2"));
  EXPECT_EQ(GetStage(urgent, "eval").reason(),
            "waiting: team speech at its quota of 1 GPU (0 in use); it borrows idle GPUs only "
            "while no one under their guarantee waits, and team vision does (0 of 1 in use)");
  // The next batch (a heartbeat's) judges it again: vision is at its guarantee now.
  Heartbeat(n1);
  EXPECT_EQ(GetStage(urgent, "eval").reason(),
            "waiting for an agent with 1 cpus, 2 GPUs free; it would borrow beyond team speech's "
            "quota of 1 GPU, so it stops no attempt within team vision's guarantee");
  EXPECT_TRUE(TakeCancels().empty());
  EXPECT_EQ(GetStage(sweep, "train2").status(), v1::STAGE_RUNNING);
}

TEST_F(QuotaPreemptTest, AHighStageWithinItsGuaranteeStillPreemptsALowOne) {
  // Speech asks for 1 GPU, within its guarantee: a class preemption as without quotas (here
  // vision's borrowed attempt is the one taken back, and it is of a lower class too).
  uint64_t n1 = 0;
  std::map<std::string, int64_t> started;
  SweepHoldsBothGpus(2, &n1, &started);
  ASSERT_EQ(started.size(), 2u);
  SubmitAs("carol", "speech", "name: e\nstages:\n  eval: {run: [prog], resources: {gpus: 1}}\n",
           "high");
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), scheduler_->BorrowedAttemptIds().at(0));
}

}  // namespace
}  // namespace longhaul::scheduler

// Quotas and fair share on a scheduler with a real store and a fake clock (docs/scheduling.md):
// a team at its quota waits with the quota's reason while another team's stage starts; a team
// borrows idle GPUs only while no one under their guarantee waits, and its borrowed attempt is
// what a reclaim would take; a stage held by a GPU-hour window starts once the window has moved
// on; the queue orders by class, then fair share (which survives a restart, rebuilt from the
// stored attempts), then age.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr int64_t kHour = 3'600'000;

// `stages` parallel stages of one GPU each, every one sleeping.
std::string GpuWorkflow(const std::string& name, int stages) {
  std::string yaml = StrCat("name: ", name, "\nstages:\n");
  for (int i = 0; i < stages; ++i) {
    yaml += StrCat("  s", i, ": {run: [prog], resources: {gpus: 1}}\n");
  }
  return yaml;
}

class QuotaSchedTest : public SchedulerTest {
 protected:
  void Configure(const std::vector<std::string>& quotas, int64_t half_life_ms = 0) {
    Result<Quotas> q = Quotas::Parse(quotas);
    ASSERT_TRUE(q.ok()) << q.status();
    options_.quotas = *q;
    options_.fair_share_half_life_ms = half_life_ms;
    options_.agent_timeout_ms = options_.lost_after_ms = 100 * kHour;  // the clock jumps hours
    NewScheduler();
  }
  // Submits as `user` of `team` with `priority`; the run's id.
  int64_t SubmitAs(const std::string& user, const std::string& team, const std::string& yaml,
                   const std::string& priority = "normal") {
    return SubmitWith(yaml, [&](SubmitInput* in) {
      in->user = user;
      in->team = team;
      in->priority = priority;
      in->no_cache = true;  // the workflows are alike: each must run
    });
  }
  // The started attempts as "RUN/STAGE" -> attempt id.
  std::map<std::string, int64_t> Starts() {
    std::map<std::string, int64_t> out;
    for (const v1::StartAttempt& s : TakeStarts()) {
      out[StrCat(s.run_id(), "/", s.stage())] = s.attempt_id();
    }
    return out;
  }
};

TEST_F(QuotaSchedTest, ATeamAtItsQuotaWaitsWhileAnotherTeamStarts) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpus:1"}));
  int64_t vision = SubmitAs("olga", "vision", GpuWorkflow("v", 2));
  int64_t nlp = SubmitAs("nick", "nlp", GpuWorkflow("n", 1));
  uint64_t n1 = Connect("n1", 8, 4);
  std::map<std::string, int64_t> started = Starts();
  EXPECT_EQ(started.size(), 2u);
  EXPECT_TRUE(started.count(StrCat(vision, "/s0")));
  EXPECT_TRUE(started.count(StrCat(nlp, "/s0"))) << "younger, but its team is within its quota";
  v1::Stage waiting = GetStage(vision, "s1");
  EXPECT_EQ(waiting.status(), v1::STAGE_READY);
  EXPECT_EQ(waiting.reason(), "waiting: team vision at its quota of 1 GPU (1 in use)");

  // Vision's attempt ends: its other stage starts in the same batch.
  int64_t first = started[StrCat(vision, "/s0")];
  Started(n1, first);
  Exit(n1, first, 0);
  started = Starts();
  EXPECT_TRUE(started.count(StrCat(vision, "/s1")));
}

TEST_F(QuotaSchedTest, BorrowingWaitsForATeamUnderItsGuaranteeAndIsWhatReclaimTakes) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpus:1,borrow:2", "team:nlp=gpus:1"}));
  int64_t vision = SubmitAs("olga", "vision", GpuWorkflow("v", 2));
  int64_t nlp = SubmitAs("nick", "nlp", GpuWorkflow("n", 1));
  uint64_t n1 = Connect("n1", 8, 2);
  std::map<std::string, int64_t> started = Starts();
  ASSERT_EQ(started.size(), 2u);
  EXPECT_TRUE(started.count(StrCat(vision, "/s0")));
  EXPECT_TRUE(started.count(StrCat(nlp, "/s0")));
  EXPECT_EQ(GetStage(vision, "s1").reason(),
            "waiting: team vision at its quota of 1 GPU (1 in use); it borrows idle GPUs only "
            "while no one under their guarantee waits, and team nlp does (0 of 1 in use)");
  EXPECT_TRUE(scheduler_->BorrowedAttemptIds().empty());

  // Nlp's stage ends and nothing of nlp waits: vision borrows the idle GPU.
  int64_t n = started[StrCat(nlp, "/s0")];
  Started(n1, n);
  Exit(n1, n, 0);
  started = Starts();
  ASSERT_TRUE(started.count(StrCat(vision, "/s1")));
  int64_t borrowed = started[StrCat(vision, "/s1")];
  EXPECT_EQ(scheduler_->BorrowedAttemptIds(), (std::vector<int64_t>{borrowed}));
  EXPECT_EQ(scheduler_->ReclaimFor("team:nlp", 1), (std::vector<int64_t>{borrowed}));
  EXPECT_TRUE(scheduler_->ReclaimFor("team:vision", 1).empty()) << "vision is over its own";
}

TEST_F(QuotaSchedTest, ATeamUnderItsGuaranteeTakesBackBorrowedGpusByPreemption) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpus:1,borrow:2", "team:nlp=gpus:1"}));
  int64_t vision = SubmitAs("olga", "vision", GpuWorkflow("v", 2));
  uint64_t n1 = Connect("n1", 8, 2);
  std::map<std::string, int64_t> started = Starts();
  ASSERT_EQ(started.size(), 2u) << "nothing of nlp waits: vision borrows the second GPU";
  for (const auto& [name, id] : started) Started(n1, id);
  std::vector<int64_t> borrowed = scheduler_->BorrowedAttemptIds();
  ASSERT_EQ(borrowed.size(), 1u);

  // Nlp, under its guarantee of 1, finds both GPUs held: the borrowed attempt is stopped for it,
  // though its run is of the same class.
  int64_t nlp = SubmitAs("nick", "nlp", GpuWorkflow("n", 1));
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), borrowed[0]);
  EXPECT_EQ(cancels[0].reason(), "preempted");
  std::string victim_stage = started.at(StrCat(vision, "/s0")) == borrowed[0] ? "s0" : "s1";
  EXPECT_EQ(GetStage(nlp, "s0").reason(),
            StrCat("waiting for an agent with 1 cpus, 1 GPUs free; preempting run ", vision,
                   " stage ", victim_stage, " (normal) on n1 for its room"));
  // The guaranteed attempt of vision is not touched; once the borrowed one ends, nlp starts.
  Exit(n1, borrowed[0], 143, 15);
  started = Starts();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_TRUE(started.count(StrCat(nlp, "/s0")));
  v1::Stage stopped = GetStage(vision, victim_stage);
  ASSERT_EQ(stopped.attempts_size(), 1);
  EXPECT_EQ(stopped.attempts(0).reason(),
            StrCat("preempted: room for run ", nlp, " stage s0 (normal), taking back borrowed "
                   "GPUs for team nlp's guarantee; 0.0 GPU-min after its start"));
  EXPECT_EQ(stopped.status(), v1::STAGE_READY) << "queued again, on its infrastructure retry";
}

TEST_F(QuotaSchedTest, AStageHeldByItsGpuHourWindowStartsOnceTheWindowMovesOn) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpu_hours:1/1h"}));
  int64_t run = SubmitAs("olga", "vision",
                         "name: w\nstages:\n  s0: {run: [prog], resources: {gpus: 1}}\n"
                         "  s1: {needs: [s0], run: [prog], resources: {gpus: 1}}\n");
  uint64_t n1 = Connect("n1", 8, 1);
  int64_t a = Starts().at(StrCat(run, "/s0"));
  Started(n1, a);
  clock_.AdvanceMs(kHour);
  Exit(n1, a, 0);
  EXPECT_TRUE(Starts().empty());
  EXPECT_EQ(GetStage(run, "s1").reason(), "waiting: team vision used 1 of 1 GPU-h in the last 1h");
  // A minute on, the window holds 59 minutes of that hour: offered again, it starts.
  clock_.AdvanceMs(60'000);
  Batch();
  EXPECT_TRUE(Starts().count(StrCat(run, "/s1")));
}

TEST_F(QuotaSchedTest, ClassThenFairShareThenAgeAndTheUseSurvivesARestart) {
  ASSERT_NO_FATAL_FAILURE(Configure({}, /*half_life_ms=*/24 * kHour));
  // Vision uses the one GPU for two hours.
  int64_t past = SubmitAs("olga", "vision", GpuWorkflow("past", 1));
  uint64_t n1 = Connect("n1", 8, 1);
  int64_t a = Starts().at(StrCat(past, "/s0"));
  Started(n1, a);
  clock_.AdvanceMs(2 * kHour);
  Exit(n1, a, 0);

  // A restart: the use is read back from the stored attempts.
  NewScheduler();
  n1 = Connect("n1", 8, 1);
  // Not preemptible: the high run below waits for it to end instead of taking its GPU.
  int64_t blocker =
      SubmitAs("ci", "", StrCat("defaults: {preemptible: false}\n", GpuWorkflow("blocker", 1)));
  int64_t b = Starts().at(StrCat(blocker, "/s0"));
  Started(n1, b);
  int64_t vision = SubmitAs("olga", "vision", GpuWorkflow("v", 1));  // the oldest waiting
  int64_t nlp1 = SubmitAs("nick", "nlp", GpuWorkflow("n1", 1));
  int64_t nlp2 = SubmitAs("nick", "nlp", GpuWorkflow("n2", 1));
  int64_t urgent = SubmitAs("olga", "vision", GpuWorkflow("u", 1), "high");
  // The blocker's own use (ci) has put it behind too; what matters is who starts next.
  Exit(n1, b, 0);
  std::map<std::string, int64_t> started = Starts();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_TRUE(started.count(StrCat(urgent, "/s0"))) << "class first";
  EXPECT_EQ(
      GetStage(vision, "s0").reason(),
      StrCat("waiting for an agent with 1 cpus, 1 GPUs free; 3rd in line for 1 GPUs; "
             "ahead: run ",
             nlp1, " (team nlp, under its share), run ", nlp2, " (team nlp, under its share)"));

  int64_t u = started.at(StrCat(urgent, "/s0"));
  Started(n1, u);
  Exit(n1, u, 0);
  started = Starts();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_TRUE(started.count(StrCat(nlp1, "/s0"))) << "fair share before age";
  int64_t x = started.at(StrCat(nlp1, "/s0"));
  Started(n1, x);
  Exit(n1, x, 0);
  started = Starts();
  EXPECT_TRUE(started.count(StrCat(nlp2, "/s0")))
      << "nlp has used a little now, still far under vision's two hours";
}

}  // namespace
}  // namespace longhaul::scheduler

// The per-team figures /metrics shows (docs/operations.md, "Metrics"), from a scheduler with
// quotas, fair share, a real store and a fake clock: the GPUs each team's attempts hold, those
// beyond its guarantee, and its decayed GPU-hours; a team with a quota shows up idle.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr int64_t kGaugeHour = 3'600'000;

class TeamGaugesTest : public SchedulerTest {
 protected:
  void Configure(const std::vector<std::string>& quotas, int64_t half_life_ms) {
    Result<Quotas> q = Quotas::Parse(quotas);
    ASSERT_TRUE(q.ok()) << q.status();
    options_.quotas = *q;
    options_.fair_share_half_life_ms = half_life_ms;
    options_.agent_timeout_ms = options_.lost_after_ms = 100 * kGaugeHour;
    NewScheduler();
  }
  int64_t SubmitTeam(const std::string& user, const std::string& team, int stages) {
    std::string yaml = StrCat("name: ", team, "\nstages:\n");
    for (int i = 0; i < stages; ++i) {
      yaml += StrCat("  s", i, ": {run: [prog], resources: {gpus: 1}}\n");
    }
    return SubmitWith(yaml, [&](SubmitInput* in) {
      in->user = user;
      in->team = team;
      in->no_cache = true;
    });
  }
  std::map<std::string, SchedulerGauges::Team> Teams() {
    std::map<std::string, SchedulerGauges::Team> out;
    for (const SchedulerGauges::Team& t : scheduler_->Gauges().teams) out[t.team] = t;
    return out;
  }
};

TEST_F(TeamGaugesTest, InUseBorrowedAndDecayedHoursPerTeam) {
  ASSERT_NO_FATAL_FAILURE(Configure(
      {"team:vision=gpus:1,borrow:3", "team:nlp=gpus:2", "team:idle=gpus:1"}, kGaugeHour));
  // Vision first, while no one under a guarantee waits: it borrows two GPUs beyond its one.
  int64_t vision = SubmitTeam("olga", "vision", 3);
  uint64_t n1 = Connect("n1", 8, 4);
  int64_t nlp = SubmitTeam("nick", "nlp", 1);
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 4u);
  for (const v1::StartAttempt& s : starts) Started(n1, s.attempt_id());

  std::map<std::string, SchedulerGauges::Team> teams = Teams();
  ASSERT_EQ(teams.size(), 3u);
  EXPECT_EQ(teams["vision"].gpus_in_use, 3);
  EXPECT_EQ(teams["vision"].gpus_borrowed, 2) << "1 guaranteed of 3 held";
  EXPECT_EQ(teams["nlp"].gpus_in_use, 1);
  EXPECT_EQ(teams["nlp"].gpus_borrowed, 0);
  EXPECT_EQ(teams["idle"].gpus_in_use, 0) << "a team with a quota shows up idle";
  EXPECT_EQ(teams["idle"].decayed_gpu_hours, 0);
  // Vision's two attempts started beyond its guarantee are marked, in the store too.
  int marked = 0;
  for (const char* stage : {"s0", "s1", "s2"}) {
    v1::Stage s = GetStage(vision, stage);
    ASSERT_EQ(s.attempts_size(), 1) << stage;
    if (s.attempts(0).borrowed()) ++marked;
  }
  EXPECT_EQ(marked, 2);
  EXPECT_FALSE(GetStage(nlp, "s0").attempts(0).borrowed());

  // An hour on: vision has used 3 GPU-hours, nlp 1, each a little less for the decay.
  clock_.AdvanceMs(kGaugeHour);
  teams = Teams();
  EXPECT_GT(teams["vision"].decayed_gpu_hours, 2.0);
  EXPECT_LT(teams["vision"].decayed_gpu_hours, 3.0);
  EXPECT_NEAR(teams["vision"].decayed_gpu_hours, 3 * teams["nlp"].decayed_gpu_hours, 1e-9);
}

TEST_F(TeamGaugesTest, NoBorrowingWithoutQuotasAndNoDecayWithoutAHalfLife) {
  SubmitTeam("olga", "vision", 2);
  uint64_t n1 = Connect("n1", 8, 4);
  for (const v1::StartAttempt& s : TakeStarts()) Started(n1, s.attempt_id());
  std::map<std::string, SchedulerGauges::Team> teams = Teams();
  ASSERT_EQ(teams.size(), 1u);
  EXPECT_EQ(teams["vision"].gpus_in_use, 2);
  EXPECT_EQ(teams["vision"].gpus_borrowed, 0);
  EXPECT_LT(teams["vision"].decayed_gpu_hours, 0) << "not computed";
}

}  // namespace
}  // namespace longhaul::scheduler

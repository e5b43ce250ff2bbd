// Reservations of agents' GPUs (docs/scheduling.md, "Reservations"): the rules alone, and the
// scheduler with a fake clock: during the window others' attempts go only on the agent's other
// GPUs while the holder's use the reserved ones; before it, another's attempt goes on them only
// when it ends before the window; at the window's start others' attempts on GPUs it needs are
// stopped (queued again, no retry spent); after it the GPUs are everyone's; it survives a
// restart; bad requests name what is wrong.
#include "daemon/scheduler/reservation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kResTen = 1'796'464'800'000;  // 2026-12-05T10:00:00Z
constexpr int64_t kResHour = 3'600'000;

store::ReservationRow ReservationOf(int64_t id, int gpus, std::string team, int64_t from_ms,
                                    int64_t until_ms) {
  store::ReservationRow r;
  r.id = id;
  r.agent_id = "n1";
  r.gpus = gpus;
  r.holder_kind = "team";
  r.holder = std::move(team);
  r.from_ms = from_ms;
  r.until_ms = until_ms;
  return r;
}

TEST(ReservationRuleTest, ItBindsOthersInTheWindowAndBeforeItWhatWouldRunInto) {
  store::ReservationRow r =
      ReservationOf(3, 4, "vision", kResTen + 4 * kResHour, kResTen + 8 * kResHour);
  EXPECT_TRUE(HeldFor(r, "bob", "vision"));
  EXPECT_FALSE(HeldFor(r, "vision", "nlp")) << "a team reservation is not a user's";
  EXPECT_FALSE(HeldFor(r, "", "")) << "no team: not the holder";
  // Before the window: as the drains' fit rule decides (timeout plus grace).
  EXPECT_FALSE(ReservationBinds(r, 4 * kResHour, kResTen)) << "ends exactly at the start";
  EXPECT_TRUE(ReservationBinds(r, 4 * kResHour + 1, kResTen));
  EXPECT_TRUE(ReservationBinds(r, std::nullopt, kResTen)) << "no timeout never fits";
  // In the window: always; after: never.
  EXPECT_TRUE(ReservationBinds(r, 1, kResTen + 5 * kResHour));
  EXPECT_FALSE(ReservationBinds(r, std::nullopt, kResTen + 8 * kResHour));
}

TEST(ReservationRuleTest, KeptGpusLeaveTheHolderItsOwnAndCountWhatItUses) {
  store::ReservationRow r = ReservationOf(3, 4, "vision", kResTen, kResTen + 8 * kResHour);
  std::vector<const store::ReservationRow*> on = {&r};
  auto uses = [](int n) { return [n](const store::ReservationRow&) { return n; }; };
  const store::ReservationRow* first = nullptr;
  EXPECT_EQ(KeptGpus(on, "bob", "nlp", kResHour, kResTen, uses(0), &first), 4);
  EXPECT_EQ(first, &r);
  EXPECT_EQ(KeptGpus(on, "bob", "nlp", kResHour, kResTen, uses(3), nullptr), 1)
      << "the holder's attempts use 3 of its 4";
  EXPECT_EQ(KeptGpus(on, "bob", "nlp", kResHour, kResTen, uses(6), nullptr), 0);
  EXPECT_EQ(KeptGpus(on, "carol", "vision", kResHour, kResTen, uses(0), nullptr), 0)
      << "the holder's own";
}

TEST(ReservationRuleTest, BadReservationsAreRefusedWithWhatIsWrong) {
  store::ReservationRow other =
      ReservationOf(1, 6, "nlp", kResTen + kResHour, kResTen + 3 * kResHour);
  auto check = [&](store::ReservationRow r) {
    return std::string(ValidateReservation(r, 8, {&other}, kResTen).message());
  };
  EXPECT_EQ(check(ReservationOf(0, 2, "vision", kResTen + 2 * kResHour, kResTen + kResHour)),
            "--until 11:00 UTC is not after --from 12:00 UTC");
  EXPECT_EQ(check(ReservationOf(0, 2, "vision", kResTen - 2 * kResHour, kResTen - kResHour)),
            "the window ended at 09:00 UTC, in the past");
  EXPECT_EQ(check(ReservationOf(0, 9, "vision", kResTen, kResTen + kResHour)),
            "--gpus 9: agent n1 has 8 GPUs");
  // Overlapping from 11:00 on (where the other starts): 6 + 4 > 8.
  EXPECT_EQ(check(ReservationOf(0, 4, "vision", kResTen, kResTen + 2 * kResHour)),
            "with reservation 1, 10 of agent n1's 8 GPUs would be reserved at 11:00 UTC");
  EXPECT_TRUE(ValidateReservation(ReservationOf(0, 2, "vision", kResTen, kResTen + 2 * kResHour), 8,
                                  {&other}, kResTen)
                  .ok());
  EXPECT_TRUE(ValidateReservation(
                  ReservationOf(0, 8, "vision", kResTen + 3 * kResHour, kResTen + 4 * kResHour), 8,
                  {&other}, kResTen)
                  .ok())
      << "back to back: no overlap";
}

TEST(ReservationRuleTest, TheWaitPhraseNamesTheGpusTheHolderTheWindowAndTheId) {
  store::ReservationRow r = ReservationOf(3, 4, "vision", kResTen, kResTen + 8 * kResHour);
  EXPECT_EQ(ReservedPhrase(r, 8, kResTen + kResHour),
            "4 of n1's 8 GPUs are reserved for team vision until 18:00 UTC (reservation 3)");
  EXPECT_EQ(ReservedPhrase(r, 8, kResTen - kResHour),
            "4 of n1's 8 GPUs are reserved for team vision from 10:00 UTC until 18:00 UTC "
            "(reservation 3)");
}

class ReservationTest : public SchedulerTest {
 protected:
  ReservationTest() {
    clock_.SetMs(kResTen);
    options_.agent_timeout_ms = 24 * kResHour;
    options_.lost_after_ms = 48 * kResHour;
    NewScheduler();
  }

  int64_t Reserve(int gpus, const std::string& team, int64_t from_ms, int64_t until_ms) {
    int64_t id = 0;
    Batch([&] {
      v1::ReserveRequest req;
      req.set_agent_id("n1");
      req.set_gpus(gpus);
      req.set_holder_kind("team");
      req.set_holder(team);
      req.set_from_ms(from_ms);
      req.set_until_ms(until_ms);
      req.set_reason("sprint");
      req.set_by("ada");
      Result<v1::Reservation> r = scheduler_->Reserve(req);
      ASSERT_TRUE(r.ok()) << r.status();
      id = r->id();
    });
    return id;
  }

  // A run of `team` with one stage asking for `gpus` GPUs and `timeout` ("" none).
  int64_t SubmitGpus(const std::string& team, int gpus, const std::string& timeout) {
    std::string yaml =
        StrCat("name: ", team, "-job\nstages:\n  train:\n    run: [sleep, \"1\"]\n",
               "    resources: {gpus: ", gpus, ", cpus: 1}\n",
               timeout.empty() ? "" : StrCat("    timeout: ", timeout, "\n"), "    resume: true\n");
    return SubmitWith(yaml, [&](SubmitInput* in) {
      in->user = team + "-user";
      in->team = team;
    });
  }
};

TEST_F(ReservationTest, InTheWindowOthersGetOnlyTheOtherGpusAndTheHolderTheReservedOnes) {
  Connect("n1", 16, 8);
  int64_t id = Reserve(4, "vision", 0, kResTen + 8 * kResHour);
  int64_t nlp_small = SubmitGpus("nlp", 4, "1h");
  Batch();
  EXPECT_EQ(TakeStarts().size(), 1u) << "4 of the 4 unreserved GPUs";
  EXPECT_EQ(GetStage(nlp_small, "train").status(), v1::STAGE_RUNNING);
  int64_t nlp_more = SubmitGpus("nlp", 2, "1h");
  Batch();
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_EQ(GetStage(nlp_more, "train").reason(),
            StrCat("waiting for an agent with 1 cpus, 2 GPUs free: 4 of n1's 8 GPUs are reserved "
                   "for team vision until 18:00 UTC (reservation ",
                   id, ")"));
  // The holder's run takes the reserved GPUs.
  int64_t vision = SubmitGpus("vision", 4, "");
  Batch();
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].run_id(), vision);
  // The agent shows it.
  std::vector<v1::AgentInfo> agents = scheduler_->ListAgents();
  ASSERT_EQ(agents.size(), 1u);
  ASSERT_EQ(agents[0].reservations_size(), 1);
  EXPECT_EQ(agents[0].reservations(0).holder(), "vision");
}

// Another's stage of the same shape waits first in the queue: the holder's behind it is still
// offered the reserved GPUs.
TEST_F(ReservationTest, TheHoldersStageBehindAnothersOfTheSameShapeStarts) {
  Connect("n1", 16, 8);
  Reserve(4, "vision", 0, kResTen + 8 * kResHour);
  SubmitGpus("nlp", 4, "1h");
  Batch();
  ASSERT_EQ(TakeStarts().size(), 1u);
  int64_t nlp = SubmitGpus("nlp", 4, "1h");
  int64_t vision = SubmitGpus("vision", 4, "1h");
  Batch();
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].run_id(), vision);
  EXPECT_EQ(GetStage(nlp, "train").status(), v1::STAGE_READY);
  EXPECT_THAT(GetStage(nlp, "train").reason(), HasSubstr("reserved for team vision"));
}

TEST_F(ReservationTest, TheHolderIsNotLimitedToItsReservation) {
  Connect("n1", 16, 8);
  Reserve(2, "vision", 0, kResTen + 8 * kResHour);
  SubmitGpus("vision", 8, "");
  Batch();
  EXPECT_EQ(TakeStarts().size(), 1u) << "all 8: the 2 reserved and the 6 others";
}

TEST_F(ReservationTest, BeforeTheWindowOnlyWhatEndsBeforeItGoesOnTheReservedGpus) {
  Connect("n1", 16, 8);
  int64_t id = Reserve(8, "vision", kResTen + 4 * kResHour, kResTen + 8 * kResHour);
  int64_t fits = SubmitGpus("nlp", 4, "3h");
  Batch();
  EXPECT_EQ(TakeStarts().size(), 1u);
  EXPECT_EQ(GetStage(fits, "train").status(), v1::STAGE_RUNNING);
  int64_t too_long = SubmitGpus("nlp", 2, "6h");
  Batch();
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_THAT(GetStage(too_long, "train").reason(),
              HasSubstr(StrCat(": 8 of n1's 8 GPUs are reserved for team vision from 14:00 UTC "
                               "until 18:00 UTC (reservation ",
                               id, ")")));
  // After the window: everyone's again.
  clock_.SetMs(kResTen + 8 * kResHour);
  Batch();
  EXPECT_EQ(TakeStarts().size(), 1u);
  EXPECT_EQ(GetStage(too_long, "train").status(), v1::STAGE_RUNNING);
}

TEST_F(ReservationTest, AtTheStartOthersOnItsGpusAreStoppedWithNoRetrySpent) {
  uint64_t n1 = Connect("n1", 16, 8);
  int64_t nlp = SubmitGpus("nlp", 6, "");
  Batch();
  std::map<std::string, int64_t> ids = TakeStartedIds();
  ASSERT_EQ(ids.count("train"), 1u);
  Started(n1, ids["train"]);
  int64_t id = Reserve(4, "vision", kResTen + kResHour, kResTen + 3 * kResHour);
  EXPECT_TRUE(TakeCancels().empty()) << "nothing is stopped before the window";
  clock_.SetMs(kResTen + kResHour);
  Batch();
  std::vector<v1::CancelAttempt> cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), ids["train"]);
  EXPECT_EQ(cancels[0].reason(), "reservation");
  Exit(n1, ids["train"], -1, 15);
  v1::Stage s = GetStage(nlp, "train");
  EXPECT_EQ(s.status(), v1::STAGE_READY);
  EXPECT_EQ(scheduler_->FindRun(nlp)->stages[0]->row.retries_used, 0) << "no retry spent";
  ASSERT_EQ(s.attempts_size(), 1);
  EXPECT_EQ(s.attempts(0).reason(),
            StrCat("reservation: 4 of n1's GPUs are reserved for team vision from 11:00 UTC "
                   "(reservation ",
                   id, ")"));
  EXPECT_TRUE(TakeStarts().empty()) << "6 GPUs do not fit on the 4 unreserved ones";
}

TEST_F(ReservationTest, TheHoldersOwnAttemptsAndFreeGpusCoverItSoNothingIsStopped) {
  uint64_t n1 = Connect("n1", 16, 8);
  SubmitGpus("nlp", 4, "");
  Batch();
  std::map<std::string, int64_t> ids = TakeStartedIds();
  Started(n1, ids["train"]);
  Reserve(4, "vision", kResTen + kResHour, kResTen + 3 * kResHour);
  clock_.SetMs(kResTen + kResHour);
  Batch();
  EXPECT_TRUE(TakeCancels().empty()) << "4 GPUs are free for it";
}

TEST_F(ReservationTest, ItSurvivesARestartAndACancelFreesTheGpus) {
  Connect("n1", 16, 8);
  int64_t id = Reserve(8, "vision", 0, kResTen + 8 * kResHour);
  NewScheduler();
  Connect("n1", 16, 8);
  int64_t nlp = SubmitGpus("nlp", 2, "1h");
  Batch();
  EXPECT_TRUE(TakeStarts().empty()) << "the reservation came back from the store";
  EXPECT_THAT(GetStage(nlp, "train").reason(), HasSubstr(StrCat("(reservation ", id, ")")));
  Batch([&] {
    Result<v1::Reservation> r = scheduler_->Unreserve(id, "sprint moved", "ada");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->cancelled_by(), "ada");
  });
  EXPECT_EQ(TakeStarts().size(), 1u);
  Batch([&] {
    Result<std::vector<v1::Reservation>> now = scheduler_->ListReservations(false);
    ASSERT_TRUE(now.ok());
    EXPECT_TRUE(now->empty());
    Result<std::vector<v1::Reservation>> all = scheduler_->ListReservations(true);
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), 1u);
    EXPECT_EQ((*all)[0].cancel_reason(), "sprint moved");
  });
}

TEST_F(ReservationTest, BadRequestsAreRefused) {
  Connect("node-1", 16, 8);
  Batch([&] {
    v1::ReserveRequest req;
    req.set_agent_id("node1");
    req.set_gpus(2);
    req.set_holder_kind("team");
    req.set_holder("vision");
    req.set_until_ms(kResTen + kResHour);
    Result<v1::Reservation> unknown = scheduler_->Reserve(req);
    EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(unknown.status().message(), HasSubstr("no agent 'node1'"));
    EXPECT_THAT(unknown.status().message(), HasSubstr("node-1"));
    req.set_agent_id("node-1");
    req.set_gpus(9);
    EXPECT_THAT(scheduler_->Reserve(req).status().message(),
                HasSubstr("--gpus 9: agent node-1 has 8 GPUs"));
    Result<v1::Reservation> none = scheduler_->Unreserve(42, "", "ada");
    EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  });
}

}  // namespace
}  // namespace longhaul::scheduler

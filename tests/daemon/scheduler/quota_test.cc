// Quotas and fair share alone (docs/scheduling.md, "Quotas" and "Fair share"): the --quota
// rules, the usage ledger on a fake clock (in use, rolling windows, decay), the fair-share
// order, the ready queue ordered by class, fair share and age, the quota decisions and their
// words, and the borrowed attempts that a reclaim would take.
#include "daemon/scheduler/quota.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "daemon/scheduler/fair_share.h"
#include "daemon/scheduler/priority.h"
#include "daemon/scheduler/ready_queue.h"
#include "tests/testing/fake_clock.h"

namespace longhaul::scheduler {
namespace {

constexpr int64_t kHour = 3'600'000;

Quotas QuotasOf(const std::vector<std::string>& rules) {
  Result<Quotas> q = Quotas::Parse(rules);
  EXPECT_TRUE(q.ok()) << q.status();
  return q.ok() ? *q : Quotas();
}

TEST(QuotaParseTest, ReadsGuaranteeBorrowingAndGpuHours) {
  Quotas q = QuotasOf({"team:vision=gpus:4,borrow:8,gpu_hours:500/7d", "user:olga=gpus:1"});
  const QuotaSpec* v = q.Find("team:vision");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v->gpus, 4);
  EXPECT_EQ(*v->Limit(), 8);
  EXPECT_EQ(*v->gpu_hours, 500);
  EXPECT_EQ(v->period_ms, 7 * 24 * kHour);
  EXPECT_EQ(q.Guarantee("team:vision"), 4);
  EXPECT_EQ(q.Guarantee("team:nlp"), 0);
  EXPECT_EQ(q.Share("team:nlp"), 1);
  EXPECT_EQ(*q.Find("user:olga")->Limit(), 1) << "without borrow the guarantee is the limit";
  EXPECT_EQ(q.LongestPeriodMs(), 7 * 24 * kHour);
}

TEST(QuotaParseTest, BadRulesAreRefusedNamingThem) {
  auto error = [](const std::string& rule) {
    return std::string(Quotas::Parse({rule}).status().message());
  };
  EXPECT_EQ(error("vision=gpus:4"),
            "--quota 'vision=gpus:4': 'vision' is not team:NAME or user:NAME");
  EXPECT_EQ(error("team:vision=gpus:four"),
            "--quota 'team:vision=gpus:four': 'gpus:four': expected gpus:N, N a number of GPUs");
  EXPECT_EQ(error("team:vision=gpus:4,borrow:2"),
            "--quota 'team:vision=gpus:4,borrow:2': borrow:2 is less than gpus:4 (borrow is the "
            "most GPUs in all, the guaranteed ones included)");
  EXPECT_EQ(error("team:vision=gpu_hours:500"),
            "--quota 'team:vision=gpu_hours:500': 'gpu_hours:500': expected gpu_hours:H/PERIOD, "
            "as gpu_hours:500/7d");
  EXPECT_EQ(error("team:vision=cpus:3"),
            "--quota 'team:vision=cpus:3': 'cpus:3' is not gpus:N, borrow:M or "
            "gpu_hours:H/PERIOD");
  EXPECT_EQ(Quotas::Parse({"team:a=gpus:1", "team:a=gpus:2"}).status().message(),
            "--quota 'team:a=gpus:2': a second quota for team:a");
}

TEST(QuotaParseTest, TeamsFromTheConfig) {
  Result<std::map<std::string, std::string>> t = ParseTeams({"olga=vision, nick=nlp", "ada=infra"});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->at("nick"), "nlp");
  EXPECT_EQ(t->size(), 3u);
  EXPECT_EQ(ParseTeams({"olga"}).status().message(),
            "--teams 'olga': expected USER=TEAM, each a name of letters, digits and -_.@");
  EXPECT_EQ(ParseTeams({"olga=vision", "olga=nlp"}).status().message(),
            "--teams: user olga has two teams, vision and nlp");
}

TEST(UsageLedgerTest, InUseWindowAndDecayOnAFakeClock) {
  testing::FakeClock clock;
  UsageLedger usage(/*half_life_ms=*/kHour, /*keep_ms=*/24 * kHour);
  std::vector<std::string> vision = AccountsOf("olga", "vision");
  usage.Start(1, vision, 2, clock.NowMs());
  EXPECT_EQ(usage.GpusInUse("team:vision"), 2);
  EXPECT_EQ(usage.GpusInUse("user:olga"), 2);
  EXPECT_EQ(usage.GpusInUse("team:nlp"), 0);
  clock.AdvanceMs(kHour);
  EXPECT_DOUBLE_EQ(usage.WindowGpuHours("team:vision", 24 * kHour, clock.NowMs()), 2);
  // One hour of 2 GPUs, decayed with a one-hour half-life: 2 * (1 - 1/2) / ln 2.
  double decayed = 2 * 0.5 / std::log(2.0);
  EXPECT_NEAR(usage.DecayedGpuHours("team:vision", clock.NowMs()), decayed, 1e-9);
  usage.End(1, clock.NowMs());
  EXPECT_EQ(usage.GpusInUse("team:vision"), 0);
  EXPECT_NEAR(usage.DecayedGpuHours("team:vision", clock.NowMs()), decayed, 1e-9);
  clock.AdvanceMs(kHour);  // one half-life later it counts half
  EXPECT_NEAR(usage.DecayedGpuHours("team:vision", clock.NowMs()), decayed / 2, 1e-9);
  // The window sees only what lies inside it: 30 minutes of the 2-GPU hour.
  EXPECT_DOUBLE_EQ(usage.WindowGpuHours("team:vision", 90 * 60'000, clock.NowMs()), 1);
  clock.AdvanceMs(24 * kHour);
  usage.Prune(clock.NowMs());
  EXPECT_DOUBLE_EQ(usage.WindowGpuHours("team:vision", 7 * 24 * kHour, clock.NowMs()), 0)
      << "pruned: older than what any window keeps";
}

TEST(UsageLedgerTest, AttemptsLoadedAsEndedCountAsTheLiveOnesDid) {
  // What a restart rebuilds from the store equals what the running ledger had.
  testing::FakeClock clock;
  UsageLedger live(kHour, 24 * kHour), loaded(kHour, 24 * kHour);
  int64_t start = clock.NowMs();
  live.Start(7, AccountsOf("nick", ""), 4, start);
  clock.AdvanceMs(3 * kHour);
  live.End(7, clock.NowMs());
  loaded.AddEnded(AccountsOf("nick", ""), 4, start, clock.NowMs());
  clock.AdvanceMs(kHour);
  EXPECT_NEAR(live.DecayedGpuHours("user:nick", clock.NowMs()),
              loaded.DecayedGpuHours("user:nick", clock.NowMs()), 1e-9);
  EXPECT_DOUBLE_EQ(live.WindowGpuHours("user:nick", 24 * kHour, clock.NowMs()), 12);
  EXPECT_DOUBLE_EQ(loaded.WindowGpuHours("user:nick", 24 * kHour, clock.NowMs()), 12);
}

TEST(FairShareTest, LeastUseOverShareFirstAndEqualFiguresShareAPlace) {
  std::map<std::string, int> pos = FairSharePositions({{"team:vision", 10, 4},  // 2.5
                                                       {"team:nlp", 3, 1},      // 3
                                                       {"user:ci", 0, 1},
                                                       {"user:olga", 0, 1}});
  EXPECT_EQ(pos["user:ci"], 0);
  EXPECT_EQ(pos["user:olga"], 0) << "no use: the same place, so that age orders them";
  EXPECT_EQ(pos["team:vision"], 1) << "more GPU-hours, but a larger share";
  EXPECT_EQ(pos["team:nlp"], 2);
}

v1::Resources Gpus(int gpus) {
  v1::Resources r;
  r.set_cpus(1);
  r.set_gpus(gpus);
  return r;
}

TEST(FairShareQueueTest, ClassThenFairShareThenAge) {
  ReadyQueue q;
  using E = ReadyQueue::Entry;
  q.Add(E{.run_id = 1, .index = 0, .rank = 1, .share = 1}, Gpus(1));  // oldest, over its share
  q.Add(E{.run_id = 2, .index = 0, .rank = 1, .share = 0}, Gpus(1));
  q.Add(E{.run_id = 3, .index = 0, .rank = 2, .share = 0}, Gpus(1));  // low class
  q.Add(E{.run_id = 4, .index = 0, .rank = 0, .share = 1}, Gpus(8));  // high class
  q.Add(E{.run_id = 5, .index = 0, .rank = 1, .share = 0}, Gpus(8));
  EXPECT_EQ(q.gpu_runs().size(), 5u);
  std::vector<int64_t> seen;
  q.Pass([&](ReadyQueue::Entry e) {
    seen.push_back(e.run_id);
    return ReadyQueue::Outcome::kTaken;
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{4, 2, 5, 1, 3}));
  EXPECT_TRUE(q.gpu_runs().empty());
}

TEST(FairShareQueueTest, RekeyMovesEntriesWithTheirRunsPosition) {
  ReadyQueue q;
  using E = ReadyQueue::Entry;
  q.Add(E{.run_id = 1, .index = 0, .rank = 1, .share = 0}, Gpus(1));
  q.Add(E{.run_id = 2, .index = 0, .rank = 1, .share = 0}, Gpus(1));
  q.Rekey([](const E& e) { return e.run_id == 1 ? 1 : 0; });  // run 1's team used more since
  EXPECT_TRUE(q.Contains(E{.run_id = 1, .index = 0, .rank = 1, .share = 1}, Gpus(1)));
  std::vector<int64_t> seen;
  q.Pass([&](ReadyQueue::Entry e) {
    seen.push_back(e.run_id);
    return ReadyQueue::Outcome::kTaken;
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{2, 1}));
}

TEST(FairShareQueueTest, TheWaitReasonNamesWhoIsUnderItsShare) {
  RunState nlp, vision;
  nlp.row.id = 39;
  nlp.row.team = "nlp";
  nlp.share_pos = 0;
  vision.row.id = 12;
  vision.row.team = "vision";
  vision.share_pos = 1;
  StageState a, b;
  a.run = &nlp;
  a.row.resources = Gpus(2);
  b.run = &vision;
  b.row.resources = Gpus(2);
  WaitLine line;
  EXPECT_EQ(line.Place(&a), "");
  EXPECT_EQ(line.Place(&b), "; 2nd in line for 2 GPUs; ahead: run 39 (team nlp, under its share)");
}

class QuotaBlockTest : public ::testing::Test {
 protected:
  std::string Block(const std::string& user, const std::string& team, int32_t gpus,
                    std::vector<std::string> waiting_under = {}) {
    return QuotaBlock(quotas_, usage_, AccountsOf(user, team), ShareAccountOf(user, team), gpus,
                      waiting_under, clock_.NowMs())
        .why;
  }
  testing::FakeClock clock_;
  Quotas quotas_ = QuotasOf(
      {"team:vision=gpus:4,borrow:8,gpu_hours:500/7d", "team:nlp=gpus:2", "user:ci=borrow:1"});
  UsageLedger usage_{kHour, 7 * 24 * kHour};
};

TEST_F(QuotaBlockTest, WithinTheGuaranteeNothingWaits) {
  usage_.Start(1, AccountsOf("olga", "vision"), 3, clock_.NowMs());
  EXPECT_EQ(Block("olga", "vision", 1, {"team:nlp"}), "");
  EXPECT_EQ(Block("olga", "vision", 0), "") << "CPU-only stages are not held by GPU quotas";
}

TEST_F(QuotaBlockTest, AtTheLimitTheReasonNamesTheQuota) {
  usage_.Start(1, AccountsOf("nick", "nlp"), 2, clock_.NowMs());
  EXPECT_EQ(Block("nick", "nlp", 1), "team nlp at its quota of 2 GPUs (2 in use)");
  usage_.Start(2, AccountsOf("olga", "vision"), 8, clock_.NowMs());
  EXPECT_EQ(Block("olga", "vision", 1),
            "team vision at its quota of 4 GPUs (8 in use, borrowing limit 8 reached)");
  usage_.End(2, clock_.NowMs());
  usage_.Start(3, AccountsOf("olga", "vision"), 7, clock_.NowMs());
  EXPECT_EQ(Block("olga", "vision", 2),
            "team vision at its quota of 4 GPUs (7 in use, this stage asks for 2, borrowing "
            "limit 8)");
  EXPECT_EQ(Block("olga", "vision", 9),
            "team vision's borrowing limit of 8 GPUs is less than the 9 GPUs this stage asks for");
  usage_.Start(4, AccountsOf("ci", ""), 1, clock_.NowMs());
  EXPECT_EQ(Block("ci", "", 1), "user ci at its borrowing limit of 1 GPU (1 in use)");
}

TEST_F(QuotaBlockTest, BorrowingWaitsWhileAnotherIsUnderItsGuarantee) {
  usage_.Start(1, AccountsOf("olga", "vision"), 4, clock_.NowMs());
  EXPECT_EQ(Block("olga", "vision", 2), "") << "no one waits: idle GPUs may be borrowed";
  EXPECT_EQ(Block("olga", "vision", 2, {"team:nlp"}),
            "team vision at its quota of 4 GPUs (4 in use); it borrows idle GPUs only while no "
            "one under their guarantee waits, and team nlp does (0 of 2 in use)");
  EXPECT_EQ(Block("bob", "", 1, {"team:nlp"}),
            "user bob has no guaranteed GPUs; it uses idle GPUs only while no one under their "
            "guarantee waits, and team nlp does (0 of 2 in use)");
}

TEST_F(QuotaBlockTest, GpuHoursInARollingWindow) {
  usage_.Start(1, AccountsOf("olga", "vision"), 4, clock_.NowMs());
  clock_.AdvanceMs(125 * kHour);  // 500 GPU-hours
  EXPECT_EQ(Block("olga", "vision", 1), "team vision used 500 of 500 GPU-h in the last 7d");
  EXPECT_TRUE(QuotaBlock(quotas_, usage_, AccountsOf("olga", "vision"), "team:vision", 1, {},
                         clock_.NowMs())
                  .window)
      << "it lifts as the window moves on";
  usage_.End(1, clock_.NowMs());
  clock_.AdvanceMs(7 * 24 * kHour - 100 * kHour);  // the window now holds 100 of its hours
  EXPECT_EQ(Block("olga", "vision", 1), "");
}

TEST(BorrowTest, TheNewestBeyondTheGuaranteeAreBorrowedAndReclaimedFirst) {
  Quotas quotas = QuotasOf({"team:vision=gpus:2,borrow:6", "team:nlp=gpus:4"});
  std::vector<RunningShare> running = {
      {.attempt_id = 1, .account = "team:vision", .gpus = 2, .start_ms = 100},
      {.attempt_id = 2, .account = "team:vision", .gpus = 2, .start_ms = 200},
      {.attempt_id = 3, .account = "team:vision", .gpus = 1, .start_ms = 300},
      {.attempt_id = 4, .account = "user:bob", .gpus = 1, .start_ms = 50},
      {.attempt_id = 5, .account = "team:nlp", .gpus = 1, .start_ms = 400},
  };
  std::vector<int64_t> borrowed;
  for (const RunningShare& r : BorrowedAttempts(quotas, running)) borrowed.push_back(r.attempt_id);
  EXPECT_EQ(borrowed, (std::vector<int64_t>{4, 2, 3})) << "bob has no guarantee; vision's newest";

  auto reclaim = [&](const std::string& owner, int32_t gpus) {
    std::vector<int64_t> ids;
    for (const RunningShare& r : ReclaimSet(quotas, running, owner, gpus))
      ids.push_back(r.attempt_id);
    return ids;
  };
  EXPECT_EQ(reclaim("team:nlp", 1), (std::vector<int64_t>{3}));
  EXPECT_EQ(reclaim("team:nlp", 3), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(reclaim("team:nlp", 4), (std::vector<int64_t>{})) << "beyond nlp's guarantee of 4";
  EXPECT_EQ(reclaim("team:vision", 1), (std::vector<int64_t>{})) << "vision is over its own";
}

}  // namespace
}  // namespace longhaul::scheduler

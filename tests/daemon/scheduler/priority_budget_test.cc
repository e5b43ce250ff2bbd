// Priority classes (the ready queue's order, who may use which class, where a waiting stage
// stands) and the arithmetic of GPU-hour budgets (docs/scheduling.md).
#include <gtest/gtest.h>

#include <vector>

#include "daemon/scheduler/budget.h"
#include "daemon/scheduler/priority.h"
#include "daemon/scheduler/ready_queue.h"
#include "tests/testing/fake_clock.h"

namespace longhaul::scheduler {
namespace {

using Entry = ReadyQueue::Entry;
using Outcome = ReadyQueue::Outcome;

v1::Resources Gpus(int gpus) {
  v1::Resources r;
  r.set_cpus(1);
  r.set_gpus(gpus);
  return r;
}

Entry At(int64_t run, int index, int rank) { return {.run_id = run, .index = index, .rank = rank}; }

TEST(PriorityQueueTest, ClassLeadsThenAgeAcrossAndWithinShapes) {
  ReadyQueue q;
  q.Add(At(1, 0, 2), Gpus(1));  // oldest, low
  q.Add(At(2, 0, 1), Gpus(8));  // normal
  q.Add(At(3, 0, 0), Gpus(1));  // youngest, high: same shape as run 1
  q.Add(At(4, 0, 0), Gpus(8));  // high
  std::vector<int64_t> seen;
  q.Pass([&](Entry e) {
    seen.push_back(e.run_id);
    return Outcome::kTaken;
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{3, 4, 2, 1}));
}

TEST(PriorityQueueTest, AFullShapeIsAskedOnceWhateverItsClasses) {
  ReadyQueue q;
  for (int i = 0; i < 1000; ++i) q.Add(At(100 + i, 0, i % 3), Gpus(8));
  int asked = 0;
  Entry first;
  q.Pass([&](Entry e) {
    if (asked++ == 0) first = e;
    return Outcome::kNoRoom;
  });
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(first.rank, 0);
  EXPECT_EQ(first.run_id, 100) << "the oldest of the highest class";
  std::vector<Entry> behind = q.Behind(first, Gpus(8), "", 3);
  ASSERT_EQ(behind.size(), 3u);
  EXPECT_EQ(behind[0].run_id, 103);  // high, next oldest
  EXPECT_EQ(behind[0].rank, 0);
}

TEST(PriorityQueueTest, RemoveNeedsTheRankItWasAddedWith) {
  ReadyQueue q;
  q.Add(At(1, 0, 0), Gpus(1));
  q.Remove(At(1, 0, 1), Gpus(1));
  EXPECT_EQ(q.size(), 1u);
  q.Remove(At(1, 0, 0), Gpus(1));
  EXPECT_TRUE(q.empty());
}

v1::Submitter Who(const std::string& user, const std::string& role, const std::string& team = "") {
  v1::Submitter w;
  w.set_user(user);
  w.set_role(role);
  w.set_team(team);
  return w;
}

TEST(PriorityPolicyTest, HighIsForAdminsByDefaultAndTheErrorNamesTheRule) {
  PriorityPolicy policy;
  EXPECT_EQ(*policy.Resolve("", "", Who("olga", "operator")), "normal");
  EXPECT_EQ(*policy.Resolve("low", "", Who("olga", "operator")), "low");
  EXPECT_EQ(*policy.Resolve("", "high", Who("ada", "admin")), "high");
  Result<std::string> denied = policy.Resolve("high", "", Who("olga", "operator", "vision"));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.status().message(),
            "priority class 'high' is not allowed for olga (operator, team vision): longhauld "
            "allows it only to role:admin (--priority-allow high=role:admin)");
  Result<std::string> from_file = policy.Resolve("", "high", Who("olga", "operator"));
  ASSERT_FALSE(from_file.ok());
  EXPECT_NE(from_file.status().message().find("the workflow asks for it"), std::string::npos);
}

TEST(PriorityPolicyTest, RulesNameTeamsUsersAndRoles) {
  Result<PriorityPolicy> policy =
      PriorityPolicy::Parse({"high=role:admin,team:infra,user:bob", "normal=role:operator"});
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_TRUE(policy->Resolve("high", "", Who("olga", "operator", "infra")).ok());
  EXPECT_TRUE(policy->Resolve("high", "", Who("bob", "operator")).ok());
  EXPECT_FALSE(policy->Resolve("high", "", Who("olga", "operator", "vision")).ok());
  EXPECT_FALSE(policy->Resolve("normal", "", Who("v", "viewer")).ok());
  EXPECT_TRUE(policy->Resolve("low", "", Who("v", "viewer")).ok()) << "low has no rule";
}

TEST(PriorityPolicyTest, BadRulesAreRefusedNamingThem) {
  EXPECT_EQ(PriorityPolicy::Parse({"urgent=*"}).status().message(),
            "--priority-allow 'urgent=*': unknown priority class 'urgent' (high, normal or low)");
  EXPECT_EQ(PriorityPolicy::Parse({"high=role:boss"}).status().message(),
            "--priority-allow 'high=role:boss': 'role:boss' is not role:viewer|operator|admin, "
            "team:NAME, user:NAME or *");
  EXPECT_FALSE(PriorityPolicy::Parse({"high"}).ok());
}

TEST(WaitLineTest, SaysWhoOfAHigherClassIsAhead) {
  RunState high, low;
  high.row.id = 41;
  high.row.priority = "high";
  low.row.id = 7;
  low.row.priority = "low";
  StageState a, b;
  a.run = &high;
  a.row.resources = Gpus(8);
  b.run = &low;
  b.row.resources = Gpus(8);
  WaitLine line;
  EXPECT_EQ(line.Place(&a), "");
  EXPECT_EQ(line.Place(&b), "; 2nd in line for 8 GPUs; ahead: run 41 (high)");
  EXPECT_EQ(Ordinal(1), "1st");
  EXPECT_EQ(Ordinal(12), "12th");
  EXPECT_EQ(Ordinal(23), "23rd");
}

TEST(BudgetTest, UseCountsEndedAndRunningGpuTime) {
  testing::FakeClock clock(1'000'000);
  GpuUse use{.ended_ms = 3'600'000, .running = 2, .start_ms = 2 * 1'000'000};
  clock.AdvanceMs(1'800'000);  // two GPUs for half an hour
  EXPECT_EQ(GpuMsUsedAt(use, clock.NowMs()), 3'600'000 + 3'600'000);
  EXPECT_DOUBLE_EQ(GpuHoursOfMs(GpuMsUsedAt(use, clock.NowMs())), 2.0);
}

TEST(BudgetTest, ThresholdsAndTheirTimes) {
  EXPECT_EQ(BudgetPercentReached(0, 10), 0);
  EXPECT_EQ(BudgetPercentReached(GpuMsOfHours(7.99), 10), 0);
  EXPECT_EQ(BudgetPercentReached(GpuMsOfHours(8), 10), 80);
  EXPECT_EQ(BudgetPercentReached(GpuMsOfHours(10), 10), 100);
  testing::FakeClock clock(0);
  // One GPU running since 0, 10 GPU-h: 80 % at 8 h, then 100 % at 10 h.
  GpuUse one{.ended_ms = 0, .running = 1, .start_ms = 0};
  EXPECT_EQ(NextBudgetCheckMs(one, 10, 0, clock.NowMs()), GpuMsOfHours(8));
  clock.AdvanceMs(GpuMsOfHours(8));
  EXPECT_EQ(NextBudgetCheckMs(one, 10, 80, clock.NowMs()), GpuMsOfHours(10));
  // Four GPUs reach the same use four times as fast.
  GpuUse four{.ended_ms = 0, .running = 4, .start_ms = 0};
  EXPECT_EQ(NextBudgetCheckMs(four, 10, 0, 0), GpuMsOfHours(2));
  // Nothing running: no time to check; reached: nothing further.
  EXPECT_EQ(NextBudgetCheckMs(GpuUse{}, 10, 0, 0), std::nullopt);
  EXPECT_EQ(NextBudgetCheckMs(one, 10, 100, 0), std::nullopt);
}

TEST(BudgetTest, TheReasonSaysBudgetAndUse) {
  EXPECT_EQ(BudgetReachedReason(12, 10, GpuMsOfHours(10.2)),
            "run 12's budget of 10 GPU-h reached (10.2 used)");
  EXPECT_EQ(BudgetReachedReason(12, 0.005, GpuMsOfHours(0.00503)),
            "run 12's budget of 0.005 GPU-h reached (0.00503 used)");
}

}  // namespace
}  // namespace longhaul::scheduler

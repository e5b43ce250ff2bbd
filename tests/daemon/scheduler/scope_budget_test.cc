// The accounting of team and workflow budgets alone (scope_budget.h): periods, attempts cut at
// a period's start, the next check, notices per period, the messages.
#include "daemon/scheduler/scope_budget.h"

#include <gtest/gtest.h>

#include "daemon/scheduler/budget.h"
#include "tests/testing/fake_clock.h"

namespace longhaul::scheduler {
namespace {

constexpr int64_t kScopeHourMs = 3'600'000;

store::ScopeBudgetRow VisionBudget(double hours, int64_t anchor_ms, int64_t period_ms) {
  store::ScopeBudgetRow row;
  row.scope = "team";
  row.name = "vision";
  row.gpu_hours = hours;
  row.anchor_ms = anchor_ms;
  row.period_ms = period_ms;
  return row;
}

TEST(ScopeBudgetTest, PeriodsFollowEachOtherFromTheAnchor) {
  EXPECT_EQ(BudgetPeriodStartMs(1000, 100, 1000), 1000);
  EXPECT_EQ(BudgetPeriodStartMs(1000, 100, 1099), 1000);
  EXPECT_EQ(BudgetPeriodStartMs(1000, 100, 1100), 1100);
  EXPECT_EQ(BudgetPeriodStartMs(1000, 100, 1350), 1300);
  EXPECT_EQ(BudgetPeriodStartMs(1000, 100, 500), 1000) << "before the anchor: the first period";
}

TEST(ScopeBudgetTest, AnAttemptCountsForItsPartInsideThePeriod) {
  testing::FakeClock clock;
  clock.SetMs(10 * kScopeHourMs);
  // Periods of 4 h from 0: the current one started at 8 h.
  ScopeBudget b(VisionBudget(10, 0, 4 * kScopeHourMs), clock.NowMs());
  EXPECT_EQ(b.period_start_ms(), 8 * kScopeHourMs);
  // Two GPUs since 7 h (1 h before the period): 2 h of them count at 10 h.
  b.AddRunning(2, 7 * kScopeHourMs);
  EXPECT_EQ(b.UsedMs(clock.NowMs()), 4 * kScopeHourMs);
  // One GPU from 9 h to 9.5 h, ended: 0.5 GPU-h.
  b.AddEnded(1, 9 * kScopeHourMs, 9 * kScopeHourMs + kScopeHourMs / 2);
  EXPECT_EQ(b.UsedMs(clock.NowMs()), 4 * kScopeHourMs + kScopeHourMs / 2);
  // An attempt that ended before the period counts nothing.
  b.AddEnded(4, 5 * kScopeHourMs, 7 * kScopeHourMs);
  EXPECT_EQ(b.UsedMs(clock.NowMs()), 4 * kScopeHourMs + kScopeHourMs / 2);
  // The running one ends at 11 h: what it adds is cut at 8 h as well.
  clock.SetMs(11 * kScopeHourMs);
  b.RemoveRunning(2, 7 * kScopeHourMs);
  b.AddEnded(2, 7 * kScopeHourMs, 11 * kScopeHourMs);
  EXPECT_EQ(b.UsedMs(clock.NowMs()), 6 * kScopeHourMs + kScopeHourMs / 2);
  EXPECT_EQ(b.use().running, 0);
}

TEST(ScopeBudgetTest, ANewPeriodStartsOverAndRunningAttemptsCountFromItsStart) {
  testing::FakeClock clock;
  clock.SetMs(0);
  ScopeBudget b(VisionBudget(1, 0, 2 * kScopeHourMs), clock.NowMs());
  b.AddRunning(1, 0);
  b.AddEnded(1, 0, kScopeHourMs / 2);
  clock.SetMs(kScopeHourMs);
  EXPECT_EQ(b.PercentReached(clock.NowMs()), 100);
  EXPECT_FALSE(b.Advance(clock.NowMs())) << "still the first period";
  clock.SetMs(2 * kScopeHourMs + kScopeHourMs / 4);
  EXPECT_TRUE(b.Advance(clock.NowMs()));
  EXPECT_EQ(b.period_start_ms(), 2 * kScopeHourMs);
  EXPECT_EQ(b.UsedMs(clock.NowMs()), kScopeHourMs / 4) << "the running GPU since 2 h only";
  EXPECT_EQ(b.PercentReached(clock.NowMs()), 0);
  // Removing it takes away what it added, cut at the new start.
  b.RemoveRunning(1, 0);
  EXPECT_EQ(b.use().start_ms, 0);
}

TEST(ScopeBudgetTest, TheNextCheckIsTheNextThresholdOrThePeriodsEnd) {
  testing::FakeClock clock;
  clock.SetMs(0);
  ScopeBudget b(VisionBudget(10, 0, 30 * 24 * kScopeHourMs), clock.NowMs());
  EXPECT_EQ(b.NextCheckMs(0), 30 * 24 * kScopeHourMs) << "nothing runs: the period's end";
  b.AddRunning(4, 0);
  EXPECT_EQ(b.NextCheckMs(0), 2 * kScopeHourMs) << "4 GPUs reach 8 GPU-h (80 %) in 2 h";
  ScopeBudget short_period(VisionBudget(10, 0, kScopeHourMs), clock.NowMs());
  short_period.AddRunning(1, 0);
  EXPECT_EQ(short_period.NextCheckMs(0), kScopeHourMs) << "the period ends first";
}

TEST(ScopeBudgetTest, NoticesAreRememberedPerPeriod) {
  ScopeBudget b(VisionBudget(1, 0, kScopeHourMs), 0);
  EXPECT_EQ(b.NoticedInPeriod(), 0);
  b.SetNoticed(80);
  EXPECT_EQ(b.NoticedInPeriod(), 80);
  EXPECT_EQ(b.row().noticed_period_ms, 0);
  b.Advance(kScopeHourMs);
  EXPECT_EQ(b.NoticedInPeriod(), 0) << "a new period notifies again";
  // As stored and loaded again in the same period: remembered.
  store::ScopeBudgetRow row = b.row();
  row.noticed = 100;
  row.noticed_period_ms = kScopeHourMs;
  EXPECT_EQ(ScopeBudget(row, kScopeHourMs + 5).NoticedInPeriod(), 100);
}

TEST(ScopeBudgetTest, MessagesNameTheScopeAndThePeriod) {
  store::ScopeBudgetRow row = VisionBudget(500, 0, 30 * 24 * kScopeHourMs);
  EXPECT_EQ(ScopeReachedReason(row, GpuMsOfHours(501.2)),
            "team vision's budget of 500 GPU-h for 30d reached (501 used)");
  EXPECT_EQ(ScopeWarningReason(row, GpuMsOfHours(400.04)),
            "team vision used 80 % of its budget of 500 GPU-h for 30d (400 used)");
  row.scope = "workflow";
  row.name = "eagle3";
  row.gpu_hours = 0.5;
  row.period_ms = 7 * 24 * kScopeHourMs;
  EXPECT_EQ(ScopeReachedReason(row, GpuMsOfHours(0.51)),
            "workflow eagle3's budget of 0.5 GPU-h for 7d reached (0.51 used)");
}

TEST(ScopeBudgetTest, ARunCountsForItsTeamOrItsWorkflowsName) {
  store::RunRow run;
  run.team = "vision";
  run.workflow_name = "eagle3";
  store::ScopeBudgetRow team = VisionBudget(1, 0, kScopeHourMs);
  EXPECT_TRUE(ScopeCovers(team, run));
  team.name = "infra";
  EXPECT_FALSE(ScopeCovers(team, run));
  store::ScopeBudgetRow wf = team;
  wf.scope = "workflow";
  wf.name = "eagle3";
  EXPECT_TRUE(ScopeCovers(wf, run));
  run.team = "";
  team.name = "";
  EXPECT_FALSE(ScopeCovers(team, run)) << "a run without a team counts for no team";
}

TEST(ScopeBudgetTest, BadScopesAndNamesAreRefusedNamingTheFlag) {
  EXPECT_TRUE(CheckBudgetScope("team", "vision").ok());
  EXPECT_EQ(CheckBudgetScope("group", "x").message(),
            "budget scope: expected team or workflow, got 'group'");
  EXPECT_EQ(CheckBudgetScope("team", "").message(), "--team: a name is required");
  EXPECT_EQ(CheckBudgetScope("workflow", "a b").message(),
            "--workflow: 'a b' is not a name (letters, digits, '-', '_', '.', '@')");
}

}  // namespace
}  // namespace longhaul::scheduler

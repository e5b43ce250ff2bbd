// GPU-hour budgets of every run of a team or of a workflow name, per period
// (docs/scheduling.md, "Budgets for a team or a workflow"): what a scope has used in its
// current period, apart from the scheduler so that it can be tested on its own.
//
// Periods follow each other from the budget's anchor (when it was first set) in steps of its
// period: with a 30-day period set on 1 March at 10:00, the periods start on 1 March, 31 March,
// 30 April, ... at 10:00. An attempt counts for the part of its running time inside the
// current period, times its stage's GPUs: the figure of `gpu-hours` in `longhaul show`, cut at
// the period's start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "daemon/scheduler/model.h"
#include "daemon/store/rows.h"

namespace longhaul::scheduler {

inline constexpr int64_t kDefaultBudgetPeriodMs = 30LL * 24 * 3'600'000;

// Checks a scope ("team" or "workflow") and its name: InvalidArgument naming the flag.
Status CheckBudgetScope(const std::string& scope, const std::string& name);

// The start of the period that holds `now_ms`.
int64_t BudgetPeriodStartMs(int64_t anchor_ms, int64_t period_ms, int64_t now_ms);

// "team vision", "workflow eagle3".
std::string ScopeLabel(const store::ScopeBudgetRow& row);
// "team vision's budget of 500 GPU-h for 30d reached (501 used)".
std::string ScopeReachedReason(const store::ScopeBudgetRow& row, int64_t used_ms);
// "team vision used 80 % of its budget of 500 GPU-h for 30d (400 used)".
std::string ScopeWarningReason(const store::ScopeBudgetRow& row, int64_t used_ms);

// Whether the run counts for the scope: its team, or its workflow's name, is the scope's name.
bool ScopeCovers(const store::ScopeBudgetRow& row, const store::RunRow& run);

// One budget and its use in the current period. `use` is a GpuUse whose running attempts'
// starts are cut at the period's start, so GpuMsUsedAt(use, now) is the use in the period.
class ScopeBudget {
 public:
  ScopeBudget(store::ScopeBudgetRow row, int64_t now_ms);

  const store::ScopeBudgetRow& row() const { return row_; }
  store::ScopeBudgetRow& mutable_row() { return row_; }
  int64_t period_start_ms() const { return period_start_ms_; }
  int64_t period_end_ms() const { return period_start_ms_ + row_.period_ms; }
  const GpuUse& use() const { return use_; }

  // Starts over at the period that holds `now_ms` when that is a later one: ended attempts
  // count nothing more; running ones count from the new period's start. Returns true when it
  // did. `ended_ms` (what ended attempts used in the period, from the store) replaces the
  // ended part.
  bool Advance(int64_t now_ms);
  void SetEndedMs(int64_t ended_ms) { use_.ended_ms = ended_ms; }
  // A running attempt of `gpus` GPUs, started at `start_ms`, begins or stops counting.
  void AddRunning(int64_t gpus, int64_t start_ms);
  void RemoveRunning(int64_t gpus, int64_t start_ms);
  // An attempt ended: its GPU time inside the period is added.
  void AddEnded(int64_t gpus, int64_t start_ms, int64_t end_ms);

  int64_t UsedMs(int64_t now_ms) const;
  // 0, 80 or 100: the highest threshold the use has reached.
  int PercentReached(int64_t now_ms) const;
  // When the next check is due: the next threshold the running attempts will cross, or the
  // period's end, whichever is first.
  int64_t NextCheckMs(int64_t now_ms) const;
  // The threshold already notified in the current period (0 in a new one).
  int NoticedInPeriod() const;
  void SetNoticed(int percent);

  uint64_t timer_gen = 0;  // invalidates its armed check timers
  bool holds = false;      // its runs are paused: it was at 100 % at its last check

 private:
  store::ScopeBudgetRow row_;
  int64_t period_start_ms_ = 0;
  GpuUse use_;
};

}  // namespace longhaul::scheduler

// GPU-hour budgets of runs (docs/scheduling.md, "Budgets"): the arithmetic, apart from the
// scheduler so that it can be tested on its own. A run's use is its GpuUse (model.h): the
// ended attempts' GPU time, and each running attempt's GPUs times how long it has run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "daemon/scheduler/model.h"

namespace longhaul::scheduler {

inline constexpr int kBudgetWarnPercent = 80;

// GPU-milliseconds used by `now_ms`.
int64_t GpuMsUsedAt(const GpuUse& use, int64_t now_ms);
inline double GpuHoursOfMs(int64_t ms) { return static_cast<double>(ms) / 3'600'000.0; }
inline int64_t GpuMsOfHours(double hours) { return static_cast<int64_t>(hours * 3'600'000.0); }
// Three significant digits: "10", "10.2", "0.0003" (budgets' and quotas' messages).
std::string GpuHoursText(double hours);

// The highest threshold (0, 80 or 100 percent) that `used_ms` of `budget_hours` has reached.
int BudgetPercentReached(int64_t used_ms, double budget_hours);

// When the running attempts will bring the use to the next threshold above `reached` (80 or
// 100 percent), at the earliest; nullopt when nothing runs or 100 % is reached already.
std::optional<int64_t> NextBudgetCheckMs(const GpuUse& use, double budget_hours, int reached,
                                         int64_t now_ms);

// "run 12's budget of 10 GPU-h reached (10.2 used)": the run named, as a team's or workflow's
// reason names its scope, so that "budget: " before it (a hard stop's attempt) reads once.
std::string BudgetReachedReason(int64_t run_id, double budget_hours, int64_t used_ms);

}  // namespace longhaul::scheduler

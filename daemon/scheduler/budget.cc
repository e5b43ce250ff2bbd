#include "daemon/scheduler/budget.h"

#include <algorithm>
#include <cstdio>

#include "core/strings.h"

namespace longhaul::scheduler {

std::string GpuHoursText(double hours) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", hours);
  return buf;
}

int64_t GpuMsUsedAt(const GpuUse& use, int64_t now_ms) {
  return use.ended_ms + std::max<int64_t>(0, use.running * now_ms - use.start_ms);
}

int BudgetPercentReached(int64_t used_ms, double budget_hours) {
  int64_t budget_ms = GpuMsOfHours(budget_hours);
  if (used_ms >= budget_ms) return 100;
  // used / budget >= 80 %, in integers: no rounding puts it a millisecond early.
  if (used_ms * 100 >= budget_ms * kBudgetWarnPercent) return kBudgetWarnPercent;
  return 0;
}

std::optional<int64_t> NextBudgetCheckMs(const GpuUse& use, double budget_hours, int reached,
                                         int64_t now_ms) {
  if (use.running <= 0 || reached >= 100) return std::nullopt;
  int64_t budget_ms = GpuMsOfHours(budget_hours);
  int64_t target = reached >= kBudgetWarnPercent
                       ? budget_ms
                       : (budget_ms * kBudgetWarnPercent + 99) / 100;  // ceil of 80 %
  int64_t missing = target - GpuMsUsedAt(use, now_ms);
  if (missing <= 0) return now_ms;
  // Each running GPU adds 1 ms a ms: the target is reached after ceil(missing / running).
  return now_ms + (missing + use.running - 1) / use.running;
}

std::string BudgetReachedReason(int64_t run_id, double budget_hours, int64_t used_ms) {
  return StrCat("run ", run_id, "'s budget of ", GpuHoursText(budget_hours), " GPU-h reached (",
                GpuHoursText(GpuHoursOfMs(used_ms)), " used)");
}

}  // namespace longhaul::scheduler

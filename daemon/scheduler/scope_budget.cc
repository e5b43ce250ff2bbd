#include "daemon/scheduler/scope_budget.h"

#include <algorithm>
#include <utility>

#include "core/duration.h"
#include "core/strings.h"
#include "daemon/scheduler/budget.h"

namespace longhaul::scheduler {
namespace {

std::string ScopeBudgetText(const store::ScopeBudgetRow& row) {
  return StrCat("budget of ", GpuHoursText(row.gpu_hours), " GPU-h for ",
                FormatWholeDurationMs(row.period_ms));
}

bool ScopeNameCharOk(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '@';
}

}  // namespace

Status CheckBudgetScope(const std::string& scope, const std::string& name) {
  if (scope != "team" && scope != "workflow") {
    return absl::InvalidArgumentError(
        StrCat("budget scope: expected team or workflow, got '", scope, "'"));
  }
  if (name.empty()) return absl::InvalidArgumentError(StrCat("--", scope, ": a name is required"));
  if (name.size() > 128 || !std::all_of(name.begin(), name.end(), ScopeNameCharOk)) {
    return absl::InvalidArgumentError(
        StrCat("--", scope, ": '", name, "' is not a name (letters, digits, '-', '_', '.', '@')"));
  }
  return OkStatus();
}

int64_t BudgetPeriodStartMs(int64_t anchor_ms, int64_t period_ms, int64_t now_ms) {
  if (period_ms <= 0 || now_ms <= anchor_ms) return anchor_ms;
  return anchor_ms + (now_ms - anchor_ms) / period_ms * period_ms;
}

std::string ScopeLabel(const store::ScopeBudgetRow& row) {
  return StrCat(row.scope, " ", row.name);
}

std::string ScopeReachedReason(const store::ScopeBudgetRow& row, int64_t used_ms) {
  return StrCat(ScopeLabel(row), "'s ", ScopeBudgetText(row), " reached (",
                GpuHoursText(GpuHoursOfMs(used_ms)), " used)");
}

std::string ScopeWarningReason(const store::ScopeBudgetRow& row, int64_t used_ms) {
  return StrCat(ScopeLabel(row), " used ", kBudgetWarnPercent, " % of its ", ScopeBudgetText(row),
                " (", GpuHoursText(GpuHoursOfMs(used_ms)), " used)");
}

bool ScopeCovers(const store::ScopeBudgetRow& row, const store::RunRow& run) {
  if (row.scope == "team") return !run.team.empty() && run.team == row.name;
  return run.workflow_name == row.name;
}

ScopeBudget::ScopeBudget(store::ScopeBudgetRow row, int64_t now_ms)
    : row_(std::move(row)),
      period_start_ms_(BudgetPeriodStartMs(row_.anchor_ms, row_.period_ms, now_ms)) {}

bool ScopeBudget::Advance(int64_t now_ms) {
  int64_t start = BudgetPeriodStartMs(row_.anchor_ms, row_.period_ms, now_ms);
  if (start <= period_start_ms_) return false;
  period_start_ms_ = start;
  use_.ended_ms = 0;
  // Every attempt still running began before the new period: each counts from its start.
  use_.start_ms = use_.running * start;
  return true;
}

void ScopeBudget::AddRunning(int64_t gpus, int64_t start_ms) {
  use_.running += gpus;
  use_.start_ms += gpus * std::max(start_ms, period_start_ms_);
}

void ScopeBudget::RemoveRunning(int64_t gpus, int64_t start_ms) {
  use_.running -= gpus;
  use_.start_ms -= gpus * std::max(start_ms, period_start_ms_);
}

void ScopeBudget::AddEnded(int64_t gpus, int64_t start_ms, int64_t end_ms) {
  use_.ended_ms += gpus * std::max<int64_t>(0, end_ms - std::max(start_ms, period_start_ms_));
}

int64_t ScopeBudget::UsedMs(int64_t now_ms) const { return GpuMsUsedAt(use_, now_ms); }

int ScopeBudget::PercentReached(int64_t now_ms) const {
  return BudgetPercentReached(UsedMs(now_ms), row_.gpu_hours);
}

int64_t ScopeBudget::NextCheckMs(int64_t now_ms) const {
  int64_t end = period_end_ms();
  std::optional<int64_t> at =
      NextBudgetCheckMs(use_, row_.gpu_hours, PercentReached(now_ms), now_ms);
  return at ? std::min(*at, end) : end;
}

int ScopeBudget::NoticedInPeriod() const {
  return row_.noticed_period_ms == period_start_ms_ ? row_.noticed : 0;
}

void ScopeBudget::SetNoticed(int percent) {
  row_.noticed = percent;
  row_.noticed_period_ms = period_start_ms_;
}

}  // namespace longhaul::scheduler

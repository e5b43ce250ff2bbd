// Budgets of a team's or a workflow name's runs on the scheduler's side (docs/scheduling.md,
// "Budgets for a team or a workflow"): the scope's use kept as attempts start and end, its
// notices once per period, and the pause of every run it covers at 100 %, through the same
// ApplyBudgetHold as a run's own budget (budget_sched.cc). The arithmetic is in scope_budget.cc.
#include <cmath>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/budget.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {
namespace {

std::string ScopeBudgetKey(const std::string& scope, const std::string& name) {
  return StrCat(scope, "/", name);
}

}  // namespace

Status Scheduler::LoadScopeBudgets() {
  scope_budgets_.clear();
  ASSIGN_OR_RETURN(std::vector<store::ScopeBudgetRow> rows, store_->LoadScopeBudgets());
  int64_t now = clock_->NowMs();
  for (auto& row : rows) {
    std::string key = ScopeBudgetKey(row.scope, row.name);
    auto b = std::make_unique<ScopeBudget>(std::move(row), now);
    ASSIGN_OR_RETURN(int64_t ended,
                     store_->ScopeEndedGpuMs(b->row().scope, b->row().name, b->period_start_ms()));
    b->SetEndedMs(ended);
    scope_budgets_[key] = std::move(b);
  }
  return OkStatus();
}

void Scheduler::CountRunningScopeUse(ScopeBudget* b) {
  for (const auto& [id, a] : runs_.live_attempts()) {
    if (a->stage == nullptr || a->counted.running <= 0) continue;
    if (!ScopeCovers(b->row(), a->stage->run->row)) continue;
    b->AddRunning(a->counted.running, a->counted.start_ms / a->counted.running);
  }
}

void Scheduler::RecoverScopeUse() {
  for (auto& [key, b] : scope_budgets_) {
    CountRunningScopeUse(b.get());
    CheckScopeBudget(b.get(), /*apply_to_all=*/true);
  }
}

void Scheduler::CountScopeUse(const AttemptState& a, const GpuUse& before, const GpuUse& now) {
  if (scope_budgets_.empty() || a.stage == nullptr) return;
  const RunState* run = a.stage->run;
  for (auto& [key, b] : scope_budgets_) {
    if (!ScopeCovers(b->row(), run->row)) continue;
    if (before.running > 0) b->RemoveRunning(before.running, before.start_ms / before.running);
    if (now.running > 0) b->AddRunning(now.running, now.start_ms / now.running);
    if (now.ended_ms > before.ended_ms && a.row.started_at_ms && a.row.ended_at_ms) {
      b->AddEnded(a.stage->row.resources.gpus(), *a.row.started_at_ms, *a.row.ended_at_ms);
    }
    timers_.Push({clock_->NowMs(), TimerKind::kScopeBudget, 0, key, b->timer_gen});
  }
}

void Scheduler::FireScopeBudgetTimer(const Timer& t) {
  auto it = scope_budgets_.find(t.key);
  if (it == scope_budgets_.end() || it->second->timer_gen != t.generation) return;
  CheckScopeBudget(it->second.get(), /*apply_to_all=*/false);
}

void Scheduler::CheckScopeBudget(ScopeBudget* b, bool apply_to_all) {
  int64_t now = clock_->NowMs();
  if (b->Advance(now)) {
    // A new period: what ended in it so far is in the store (rows are written as they end).
    Result<int64_t> ended =
        store_->ScopeEndedGpuMs(b->row().scope, b->row().name, b->period_start_ms());
    if (ended.ok()) {
      b->SetEndedMs(*ended);
    } else {
      GetLogger("scheduler")
          ->error("{}: {}", ScopeLabel(b->row()), ToStd(ended.status().message()));
    }
  }
  int64_t used = b->UsedMs(now);
  int reached = BudgetPercentReached(used, b->row().gpu_hours);
  // A notice once per threshold and period, remembered in the budget's row across restarts.
  if (reached > b->NoticedInPeriod()) {
    b->SetNoticed(reached);
    if (Status st = store_->PutScopeBudget(b->row()); !st.ok()) {
      GetLogger("scheduler")->error("{}: {}", ScopeLabel(b->row()), ToStd(st.message()));
    }
    if (reached >= 100) {
      Notice("budget_reached", nullptr, nullptr, 0,
             StrCat(ScopeReachedReason(b->row(), used), "; its runs start no new attempts"));
    } else {
      Notice("budget_warning", nullptr, nullptr, 0, ScopeWarningReason(b->row(), used));
    }
  }
  bool holds = reached >= 100;
  if (holds != b->holds || apply_to_all) {
    b->holds = holds;
    GetLogger("scheduler")
        ->info("{}: {}", ScopeLabel(b->row()),
               holds ? ScopeReachedReason(b->row(), used) + "; its runs pause"
                     : "within its budget; its runs continue");
    std::vector<RunState*> covered;
    for (const auto& [id, run] : runs_) {
      if (ScopeCovers(b->row(), run->row)) covered.push_back(run.get());
    }
    for (RunState* run : covered) ApplyBudgetHold(run);
  }
  ++b->timer_gen;  // earlier timers are stale now
  timers_.Push({b->NextCheckMs(now), TimerKind::kScopeBudget, 0,
                ScopeBudgetKey(b->row().scope, b->row().name), b->timer_gen});
}

std::optional<std::string> Scheduler::ScopeHoldOf(const RunState& run, bool* hard) const {
  std::optional<std::string> reason;
  int64_t now = clock_->NowMs();
  for (const auto& [key, b] : scope_budgets_) {
    if (!ScopeCovers(b->row(), run.row)) continue;
    int64_t used = b->UsedMs(now);
    if (BudgetPercentReached(used, b->row().gpu_hours) < 100) continue;
    if (!reason) reason = ScopeReachedReason(b->row(), used);
    if (b->row().hard) *hard = true;
  }
  return reason;
}

v1::ScopeBudget Scheduler::SnapshotScopeBudget(const ScopeBudget& b) const {
  int64_t now = clock_->NowMs();
  v1::ScopeBudget out;
  out.set_scope(b.row().scope);
  out.set_name(b.row().name);
  out.set_gpu_hours(b.row().gpu_hours);
  out.set_hard(b.row().hard);
  out.set_period_ms(b.row().period_ms);
  out.set_period_start_ms(b.period_start_ms());
  out.set_used_gpu_hours(GpuHoursOfMs(b.UsedMs(now)));
  out.set_reached(b.PercentReached(now) >= 100);
  out.set_set_by(b.row().set_by);
  out.set_set_at_ms(b.row().set_at_ms);
  for (const auto& [id, run] : runs_) {
    if (run->budget_paused && out.reached() && ScopeCovers(b.row(), run->row)) {
      out.add_paused_runs(id);
    }
  }
  return out;
}

std::vector<v1::ScopeBudget> Scheduler::ListScopeBudgets() const {
  std::vector<v1::ScopeBudget> out;
  for (const auto& [key, b] : scope_budgets_) out.push_back(SnapshotScopeBudget(*b));
  return out;
}

Result<v1::ScopeBudget> Scheduler::SetScopeBudget(const v1::SetBudgetRequest& req) {
  RETURN_IF_ERROR(CheckBudgetScope(req.scope(), req.name()));
  if (!(req.gpu_hours() > 0) || !std::isfinite(req.gpu_hours())) {
    return absl::InvalidArgumentError(
        StrCat("--gpu-hours: expected a number > 0, got ", req.gpu_hours()));
  }
  if (req.period_ms() < 0 || (req.period_ms() > 0 && req.period_ms() < 3'600'000)) {
    return absl::InvalidArgumentError(
        StrCat("--period: expected at least 1h, got ", FormatWholeDurationMs(req.period_ms())));
  }
  int64_t now = clock_->NowMs();
  std::string key = ScopeBudgetKey(req.scope(), req.name());
  std::unique_ptr<ScopeBudget>& b = scope_budgets_[key];
  store::ScopeBudgetRow row;
  if (b != nullptr) {
    row = b->row();  // the anchor stays: its periods go on
  } else {
    row.scope = req.scope();
    row.name = req.name();
    row.anchor_ms = now;
    row.period_ms = kDefaultBudgetPeriodMs;
  }
  if (req.period_ms() > 0) row.period_ms = req.period_ms();
  row.gpu_hours = req.gpu_hours();
  row.hard = req.hard();
  row.set_by = req.by();
  row.set_at_ms = now;
  row.noticed = 0;  // thresholds are notified anew against the new budget
  uint64_t gen = b != nullptr ? b->timer_gen : 0;
  bool held = b != nullptr && b->holds;
  auto fresh = std::make_unique<ScopeBudget>(row, now);
  fresh->timer_gen = gen;
  fresh->holds = held;
  Result<int64_t> ended = store_->ScopeEndedGpuMs(row.scope, row.name, fresh->period_start_ms());
  if (!ended.ok()) {
    if (b == nullptr) scope_budgets_.erase(key);
    return ended.status();
  }
  fresh->SetEndedMs(*ended);
  if (Status st = store_->PutScopeBudget(row); !st.ok()) {
    if (b == nullptr) scope_budgets_.erase(key);
    return st;
  }
  b = std::move(fresh);
  CountRunningScopeUse(b.get());
  // Every covered run is looked at again: `hard` may have changed as well as the figure.
  CheckScopeBudget(b.get(), /*apply_to_all=*/true);
  return SnapshotScopeBudget(*b);
}

}  // namespace longhaul::scheduler

// GPU-hour budgets on the scheduler's side (docs/scheduling.md, "Budgets"): the 80 % notice,
// the pause at 100 % and the resume when an admin raises the budget. The arithmetic is in
// budget.cc.
#include <cmath>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/budget.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {

void Scheduler::BudgetCheckSoon(RunState* run) {
  if (!run->row.budget_gpu_hours) return;
  timers_.Push({clock_->NowMs(), TimerKind::kBudget, run->row.id, "", run->budget_gen});
}

void Scheduler::CheckBudget(RunState* run) {
  if (run->row.ended_at_ms) return;
  if (!run->row.budget_gpu_hours) {
    ApplyBudgetHold(run);  // a team's or workflow's budget may hold it
    return;
  }
  double budget = *run->row.budget_gpu_hours;
  int64_t now = clock_->NowMs();
  int64_t used = GpuMsUsedAt(run->gpu, now);
  int reached = BudgetPercentReached(used, budget);
  // A notice once per threshold, remembered in the run's row across restarts.
  if (reached > run->row.budget_noticed) {
    run->row.budget_noticed = reached;
    if (Status st = store_->UpdateRunBudget(run->row); !st.ok()) {
      GetLogger("scheduler")->error("run {}: {}", run->row.id, ToStd(st.message()));
    }
    if (reached >= 100) {
      Notice("budget_reached", run, nullptr, 0,
             StrCat(BudgetReachedReason(run->row.id, budget, used), "; no new attempts"), "");
    } else {
      Notice("budget_warning", run, nullptr, 0,
             StrCat(kBudgetWarnPercent, " % of the budget of ", budget, " GPU-h used (",
                    GpuHoursOfMs(used), ")"),
             "");
    }
  }
  ApplyBudgetHold(run);
  ++run->budget_gen;  // earlier timers are stale now
  if (std::optional<int64_t> at = NextBudgetCheckMs(run->gpu, budget, reached, now)) {
    timers_.Push({*at, TimerKind::kBudget, run->row.id, "", run->budget_gen});
  }
}

std::optional<Scheduler::BudgetHold> Scheduler::BudgetHoldOf(const RunState& run) const {
  BudgetHold hold;
  std::optional<std::string> own;
  if (run.row.budget_gpu_hours) {
    int64_t used = GpuMsUsedAt(run.gpu, clock_->NowMs());
    if (BudgetPercentReached(used, *run.row.budget_gpu_hours) >= 100) {
      own = BudgetReachedReason(run.row.id, *run.row.budget_gpu_hours, used);
      hold.hard = run.row.budget_hard;
    }
  }
  std::optional<std::string> scope = ScopeHoldOf(run, &hold.hard);
  if (!own && !scope) return std::nullopt;
  hold.reason = own ? *own : *scope;
  hold.scope_reason = scope.value_or("");
  return hold;
}

void Scheduler::RecordBudgetHold(RunState* run, const std::string& scope_reason) {
  if (run->row.budget_hold == scope_reason) return;
  run->row.budget_hold = scope_reason;
  if (Status st = store_->UpdateRunBudget(run->row); !st.ok()) {
    GetLogger("scheduler")->error("run {}: {}", run->row.id, ToStd(st.message()));
  }
  batch_.changed_runs.insert(run->row.id);
}

void Scheduler::ApplyBudgetHold(RunState* run) {
  if (run->row.ended_at_ms) return;
  std::optional<BudgetHold> hold = BudgetHoldOf(*run);
  RecordBudgetHold(run, hold ? hold->scope_reason : "");
  if (hold) {
    if (!run->budget_paused) {
      run->budget_paused = true;
      GetLogger("scheduler")->info("run {}: {}; paused", run->row.id, hold->reason);
    }
    for (auto& s : run->stages) {
      if (s->row.status == v1::STAGE_READY) {
        ready_.Remove(ReadyEntryOf(s.get()), s->row.resources, PlacementKey(s.get()));
        if (s->row.reason != hold->reason) {
          s->row.reason = hold->reason;
          MarkChanged(s.get());
        }
      } else if (hold->hard && s->current != nullptr && s->current->kill_reason.empty()) {
        StopAtCheckpoint(s->current, "budget", hold->reason);  // a notice first, if it asks
      }
    }
  } else if (run->budget_paused) {
    run->budget_paused = false;
    GetLogger("scheduler")->info("run {}: within its budgets again; continues", run->row.id);
    for (auto& s : run->stages) {
      if (s->row.status != v1::STAGE_READY) continue;
      s->row.reason = ReadyReason(s.get());
      MarkChanged(s.get());
      ready_.Add(ReadyEntryOf(s.get()), s->row.resources, PlacementKey(s.get()));
    }
    dispatch_needed_ = true;
  }
}

bool Scheduler::BudgetHolds(StageState* s) {
  RunState* run = s->run;
  if (!run->budget_paused && scope_budgets_.empty()) return false;
  std::optional<BudgetHold> hold = BudgetHoldOf(*run);
  if (!run->budget_paused) {
    if (!hold) return false;
    // A team's or workflow's budget was reached before this run had a stage ready.
    run->budget_paused = true;
    RecordBudgetHold(run, hold->scope_reason);
    GetLogger("scheduler")->info("run {}: {}; paused", run->row.id, hold->reason);
  }
  // Paused and no longer held: the check that resumes it is due and returns it to the queue.
  if (hold) s->row.reason = hold->reason;
  MarkChanged(s);
  return true;
}

void Scheduler::FillBudget(const RunState& run, v1::Run* out) const {
  if (!out->has_budget()) return;
  double used = GpuHoursOfMs(GpuMsUsedAt(run.gpu, clock_->NowMs()));
  out->mutable_budget()->set_used_gpu_hours(used);
  // Its own budget is reached (a team's or workflow's may pause it as well: budget_hold).
  out->mutable_budget()->set_reached(run.budget_paused &&
                                     BudgetPercentReached(GpuMsUsedAt(run.gpu, clock_->NowMs()),
                                                          out->budget().gpu_hours()) >= 100);
}

Result<v1::Run> Scheduler::SetRunBudget(int64_t run_id, double gpu_hours, const std::string& by) {
  if (!(gpu_hours > 0) || !std::isfinite(gpu_hours)) {
    return absl::InvalidArgumentError(
        StrCat("--gpu-hours: expected a number > 0, got ", gpu_hours));
  }
  RunState* run = runs_.Find(run_id);
  if (run == nullptr) {
    RETURN_IF_ERROR(store_->GetRun(run_id, false).status());
    return absl::FailedPreconditionError(
        StrCat("run ", run_id, " has ended: its budget no longer matters"));
  }
  run->row.budget_gpu_hours = gpu_hours;
  run->row.budget_raised_by = by;
  run->row.budget_noticed = 0;  // thresholds are notified anew against the new budget
  RETURN_IF_ERROR(store_->UpdateRunBudget(run->row));
  CheckBudget(run);
  return SnapshotRun(*run, StageSet::kFirstPage);
}

}  // namespace longhaul::scheduler

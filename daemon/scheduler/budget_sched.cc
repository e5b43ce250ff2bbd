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
  if (!run->row.budget_gpu_hours || run->row.ended_at_ms) return;
  double budget = *run->row.budget_gpu_hours;
  int64_t now = clock_->NowMs();
  int64_t used = GpuMsUsedAt(run->gpu, now);
  int reached = BudgetPercentReached(used, budget);
  std::string reason = BudgetReachedReason(budget, used);
  // A notice once per threshold, remembered in the run's row across restarts.
  if (reached > run->row.budget_noticed) {
    run->row.budget_noticed = reached;
    if (Status st = store_->UpdateRunBudget(run->row); !st.ok()) {
      GetLogger("scheduler")->error("run {}: {}", run->row.id, ToStd(st.message()));
    }
    if (reached >= 100) {
      Notice("budget_reached", run, nullptr, 0, StrCat(reason, "; no new attempts"), "");
    } else {
      Notice("budget_warning", run, nullptr, 0,
             StrCat(kBudgetWarnPercent, " % of the budget of ", budget, " GPU-h used (",
                    GpuHoursOfMs(used), ")"),
             "");
    }
  }
  bool over = reached >= 100;
  if (over && !run->budget_paused) {
    run->budget_paused = true;
    GetLogger("scheduler")->info("run {}: {}; paused", run->row.id, reason);
    for (auto& s : run->stages) {
      if (s->row.status == v1::STAGE_READY) {
        ready_.Remove(ReadyEntryOf(s.get()), s->row.resources, PlacementKey(s.get()));
        s->row.reason = reason;
        MarkChanged(s.get());
      } else if (run->row.budget_hard && s->current != nullptr && s->current->kill_reason.empty()) {
        StopAttempt(s->current, "budget", reason);
      }
    }
  } else if (!over && run->budget_paused) {
    run->budget_paused = false;
    GetLogger("scheduler")
        ->info("run {}: budget raised to {} GPU-h; continues", run->row.id, budget);
    for (auto& s : run->stages) {
      if (s->row.status != v1::STAGE_READY) continue;
      s->row.reason = ReadyReason(s.get());
      MarkChanged(s.get());
      ready_.Add(ReadyEntryOf(s.get()), s->row.resources, PlacementKey(s.get()));
    }
    dispatch_needed_ = true;
  }
  ++run->budget_gen;  // earlier timers are stale now
  if (std::optional<int64_t> at = NextBudgetCheckMs(run->gpu, budget, reached, now)) {
    timers_.Push({*at, TimerKind::kBudget, run->row.id, "", run->budget_gen});
  }
}

bool Scheduler::BudgetHolds(StageState* s) {
  RunState* run = s->run;
  if (!run->budget_paused) return false;
  s->row.reason =
      BudgetReachedReason(*run->row.budget_gpu_hours, GpuMsUsedAt(run->gpu, clock_->NowMs()));
  MarkChanged(s);
  return true;
}

void Scheduler::FillBudget(const RunState& run, v1::Run* out) const {
  if (!out->has_budget()) return;
  double used = GpuHoursOfMs(GpuMsUsedAt(run.gpu, clock_->NowMs()));
  out->mutable_budget()->set_used_gpu_hours(used);
  out->mutable_budget()->set_reached(run.budget_paused);
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

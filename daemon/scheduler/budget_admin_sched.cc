// Budgets of teams and workflow names removed at run time, and those of longhauld's
// configuration applied at start (docs/scheduling.md, "Budgets for a team or a workflow" and
// "Budgets in longhauld.yaml"). The rules of the configuration are in budget_config.cc.
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/budget_config.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::scheduler {

Status Scheduler::ApplyConfigBudgets() {
  ASSIGN_OR_RETURN(std::vector<store::ScopeBudgetRow> stored, store_->LoadScopeBudgets());
  ConfigBudgetChanges changes = ConfigBudgetDiff(options_.budgets, stored, clock_->NowMs());
  for (const store::ScopeBudgetRow& row : changes.put) {
    RETURN_IF_ERROR(store_->PutScopeBudget(row));
    GetLogger("scheduler")
        ->info("{}: budget of {} GPU-h from {}", ScopeLabel(row), row.gpu_hours, kBudgetFromConfig);
  }
  for (const auto& [scope, name] : changes.remove) {
    RETURN_IF_ERROR(store_->DeleteScopeBudget(scope, name));
    GetLogger("scheduler")
        ->info("{} {}: budget removed, no longer in {}", scope, name, kBudgetFromConfig);
  }
  return OkStatus();
}

Result<v1::ScopeBudget> Scheduler::RemoveScopeBudget(const v1::RemoveBudgetRequest& req) {
  RETURN_IF_ERROR(CheckBudgetScope(req.scope(), req.name()));
  auto it = scope_budgets_.find(StrCat(req.scope(), "/", req.name()));
  if (it == scope_budgets_.end()) {
    std::vector<std::string> names;
    for (const auto& [key, b] : scope_budgets_) {
      if (b->row().scope == req.scope()) names.push_back(b->row().name);
    }
    return absl::NotFoundError(StrCat(req.scope(), " ", req.name(), " has no budget",
                                      workflow::DidYouMean(req.name(), names)));
  }
  v1::ScopeBudget was = SnapshotScopeBudget(*it->second);
  RETURN_IF_ERROR(store_->DeleteScopeBudget(req.scope(), req.name()));
  store::ScopeBudgetRow row = it->second->row();
  scope_budgets_.erase(it);
  GetLogger("scheduler")->info("{}: budget removed by {}", ScopeLabel(row), req.by());
  // The runs it paused continue, unless another budget holds them.
  std::vector<RunState*> covered;
  for (const auto& [id, run] : runs_) {
    if (ScopeCovers(row, run->row)) covered.push_back(run.get());
  }
  for (RunState* run : covered) ApplyBudgetHold(run);
  return was;
}

}  // namespace longhaul::scheduler

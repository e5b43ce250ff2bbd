// Budgets of teams and workflow names from longhauld's configuration (`budget:` in
// longhauld.yaml, --budget; docs/scheduling.md, "Budgets in longhauld.yaml"), and what they
// change in the stored budgets at start.
//
// A rule is "SCOPE:NAME=HOURS[/PERIOD][:hard]": "team:vision=500/30d:hard". At start each one
// is stored for a scope without a stored budget, set by kBudgetFromConfig; a budget an admin
// set with `longhaul budget` wins and is left alone. A stored budget set by kBudgetFromConfig
// follows the configuration: changed with it, removed when its rule is gone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "daemon/store/rows.h"

namespace longhaul::scheduler {

// What `set_by` says of a budget from longhauld's configuration.
inline constexpr char kBudgetFromConfig[] = "--budget";

struct ConfigBudget {
  std::string scope;  // "team" or "workflow"
  std::string name;
  double gpu_hours = 0;
  int64_t period_ms = 0;  // kDefaultBudgetPeriodMs when the rule names none
  bool hard = false;
  std::string text;  // as given
};

// InvalidArgument naming the rule and what is wrong with it; a second rule for one scope and
// name is refused too.
Result<std::vector<ConfigBudget>> ParseConfigBudgets(const std::vector<std::string>& rules);

// The rows to write and the (scope, name) rows to remove so that the stored budgets `stored`
// follow `config` as the contract above says; `now_ms` anchors a new budget's periods.
struct ConfigBudgetChanges {
  std::vector<store::ScopeBudgetRow> put;
  std::vector<std::pair<std::string, std::string>> remove;
};
ConfigBudgetChanges ConfigBudgetDiff(const std::vector<ConfigBudget>& config,
                                     const std::vector<store::ScopeBudgetRow>& stored,
                                     int64_t now_ms);

}  // namespace longhaul::scheduler

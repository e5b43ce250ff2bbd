// A run's place among others on a shared coordinator (docs/scheduling.md): its priority class
// and its GPU-hour budget, from the workflow's top-level `priority:` and `budget:` keys or
// from `longhaul submit --priority/--budget`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul::workflow {

// The classes, most urgent first. The ready queue orders by class, then by age.
inline constexpr std::string_view kPriorityClasses[] = {"high", "normal", "low"};
inline constexpr std::string_view kDefaultPriority = "normal";

// The class's rank (0 for high, 1 normal, 2 low); nullopt for any other name.
std::optional<int> PriorityRank(std::string_view name);
// The rank of a stored class name; an unknown or empty one ranks as normal.
int PriorityRankOrNormal(std::string_view name);
// InvalidArgument "WHERE: unknown priority class 'x' (high, normal or low)" for a bad name.
Status CheckPriorityClass(std::string_view name, std::string_view where);

// A run's GPU-hour budget: at 80 % a notice, at 100 % no new attempts (and with `hard` its
// running attempts are stopped) until an admin raises it.
struct BudgetSpec {
  std::optional<double> gpu_hours;  // none: no budget
  bool hard = false;
  bool empty() const { return !gpu_hours; }
};

}  // namespace longhaul::workflow

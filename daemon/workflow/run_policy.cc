#include "daemon/workflow/run_policy.h"

#include "core/strings.h"

namespace longhaul::workflow {

std::optional<int> PriorityRank(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kPriorityClasses)); ++i) {
    if (kPriorityClasses[i] == name) return i;
  }
  return std::nullopt;
}

int PriorityRankOrNormal(std::string_view name) {
  return PriorityRank(name).value_or(*PriorityRank(kDefaultPriority));
}

Status CheckPriorityClass(std::string_view name, std::string_view where) {
  if (PriorityRank(name)) return OkStatus();
  return absl::InvalidArgumentError(
      StrCat(where, ": unknown priority class '", name, "' (high, normal or low)"));
}

}  // namespace longhaul::workflow

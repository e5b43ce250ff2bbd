#include "daemon/scheduler/budget_config.h"

#include <cmath>
#include <map>
#include <set>

#include "core/duration.h"
#include "core/strings.h"
#include "daemon/scheduler/scope_budget.h"

namespace longhaul::scheduler {

Result<std::vector<ConfigBudget>> ParseConfigBudgets(const std::vector<std::string>& rules) {
  std::vector<ConfigBudget> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const std::string& text : rules) {
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat("--budget '", text, "': ", why));
    };
    size_t colon = text.find(':'), eq = text.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon) {
      return bad("expected team:NAME=HOURS[/PERIOD][:hard] or workflow:NAME=...");
    }
    ConfigBudget b;
    b.text = text;
    b.scope = std::string(StripWhitespace(text.substr(0, colon)));
    b.name = std::string(StripWhitespace(text.substr(colon + 1, eq - colon - 1)));
    if (Status st = CheckBudgetScope(b.scope, b.name); !st.ok()) return bad(ToStd(st.message()));
    if (!seen.insert({b.scope, b.name}).second) {
      return bad(StrCat("a second budget for ", b.scope, " ", b.name));
    }
    std::string_view value = StripWhitespace(std::string_view(text).substr(eq + 1));
    if (value.ends_with(":hard")) {
      b.hard = true;
      value.remove_suffix(5);
    }
    size_t slash = value.find('/');
    std::optional<double> hours = ParseDouble(value.substr(0, slash));
    if (!hours || !(*hours > 0) || !std::isfinite(*hours)) {
      return bad(StrCat("'", value.substr(0, slash), "': expected GPU-hours > 0"));
    }
    b.gpu_hours = *hours;
    b.period_ms = kDefaultBudgetPeriodMs;
    if (slash != std::string_view::npos) {
      Result<int64_t> period = ParseDurationMs(value.substr(slash + 1));
      if (!period.ok() || *period < 3'600'000) {
        return bad(StrCat("'", value.substr(slash + 1), "': the period must be 1h or more"));
      }
      b.period_ms = *period;
    }
    out.push_back(std::move(b));
  }
  return out;
}

ConfigBudgetChanges ConfigBudgetDiff(const std::vector<ConfigBudget>& config,
                                     const std::vector<store::ScopeBudgetRow>& stored,
                                     int64_t now_ms) {
  std::map<std::pair<std::string, std::string>, const store::ScopeBudgetRow*> by_key;
  for (const store::ScopeBudgetRow& row : stored) by_key[{row.scope, row.name}] = &row;
  ConfigBudgetChanges out;
  std::set<std::pair<std::string, std::string>> configured;
  for (const ConfigBudget& b : config) {
    configured.insert({b.scope, b.name});
    auto it = by_key.find({b.scope, b.name});
    store::ScopeBudgetRow row;
    if (it != by_key.end()) {
      if (it->second->set_by != kBudgetFromConfig) continue;  // an admin's: it wins
      row = *it->second;                                      // its anchor and notices stay
      if (row.gpu_hours == b.gpu_hours && row.hard == b.hard && row.period_ms == b.period_ms) {
        continue;
      }
      if (row.gpu_hours != b.gpu_hours) row.noticed = 0;  // thresholds anew, as SetBudget
    } else {
      row.scope = b.scope;
      row.name = b.name;
      row.anchor_ms = now_ms;
      row.set_by = kBudgetFromConfig;
    }
    row.gpu_hours = b.gpu_hours;
    row.hard = b.hard;
    row.period_ms = b.period_ms;
    row.set_at_ms = now_ms;
    out.put.push_back(std::move(row));
  }
  for (const store::ScopeBudgetRow& row : stored) {
    if (row.set_by == kBudgetFromConfig && !configured.count({row.scope, row.name})) {
      out.remove.push_back({row.scope, row.name});
    }
  }
  return out;
}

}  // namespace longhaul::scheduler

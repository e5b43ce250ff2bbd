#include "stages/inspect/acceptance_checks.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/strings.h"

namespace longhaul::inspect {
namespace {

const char kSection[] = "predictions";

}  // namespace

std::vector<std::optional<double>> ConditionalAcceptance(const AcceptanceFigures& f,
                                                         double min_support) {
  std::vector<std::optional<double>> out;
  for (size_t i = 0; i < f.per_position.size(); ++i) {
    double reached = i == 0 ? f.drafts : f.per_position[i - 1] * f.drafts;
    if (reached < min_support || reached <= 0) {
      out.push_back(std::nullopt);
      continue;
    }
    out.push_back(i == 0 ? f.per_position[0] : f.per_position[i] / f.per_position[i - 1]);
  }
  return out;
}

void CheckAcceptance(const AcceptanceFigures& f, const AcceptanceRules& rules, Report& report) {
  if (f.counters && f.drafts <= 0) {
    report.Add(Severity::kError, kSection, "no_drafts",
               "the speculative server counted no drafts while it answered the prompts: "
               "speculative decoding is not running there (no drafter loaded?)");
    return;
  }
  for (size_t i = 1; i < f.per_position.size(); ++i) {
    if (f.per_position[i] > f.per_position[i - 1] + 1e-9) {
      report.Add(Severity::kWarn, kSection, "inconsistent_counters",
                 StrCat("per-position acceptance rises from position ", i - 1, " (",
                        Fixed(f.per_position[i - 1]), ") to ", i, " (", Fixed(f.per_position[i]),
                        "): a draft can only be accepted after the ones before it, so the "
                        "server's counters are inconsistent"));
      break;
    }
  }

  if (!rules.expected.empty()) {
    bool by_position = !f.per_position.empty();
    size_t n = by_position ? std::min(rules.expected.size(), f.per_position.size()) : 1;
    for (size_t i = 0; i < n; ++i) {
      std::optional<double> measured = by_position ? std::optional(f.per_position[i]) : f.rate;
      if (!measured) break;
      double want = rules.expected[i];
      if (*measured < rules.far_below * want) {
        std::string what =
            by_position ? StrCat("acceptance at position ", i) : std::string("acceptance rate");
        report.Add(Severity::kWarn, kSection, "acceptance_far_below_expected",
                   StrCat(what, " is ", Fixed(*measured), ", far below the ", Fixed(want),
                          " expected from training (under ", Fixed(rules.far_below, 2),
                          "x): suspect a chat-template mismatch, a stale vocab mapping, "
                          "off-distribution data or wrong hidden-state layers (docs/engines.md)"));
      }
    }
  }

  auto cond = ConditionalAcceptance(f, rules.min_support);
  if (cond.size() >= 2 && cond[0]) {
    double sum = 0;
    int k = 0;
    for (size_t i = 1; i < cond.size(); ++i) {
      if (cond[i]) {
        sum += *cond[i];
        ++k;
      }
    }
    if (k > 0) {
      double later = sum / k;
      if (*cond[0] < rules.pos0_ratio * later) {
        report.Add(Severity::kWarn, kSection, "weak_position_0",
                   StrCat("position 0 accepts ", Fixed(*cond[0]),
                          " of drafts while later positions accept ", Fixed(later),
                          " of the drafts that reach them (mean): the first drafting step, the "
                          "one fed by the target's hidden states, is the weak one; suspect wrong "
                          "hidden-state layers or positions (e.g. aux layer ids the engine did "
                          "not read, docs/engines.md)"));
      }
    }
  }
}

}  // namespace longhaul::inspect

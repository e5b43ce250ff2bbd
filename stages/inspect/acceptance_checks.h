// Judging a speculative server's acceptance figures (docs/engines.md, "vLLM" metrics; known
// low-acceptance causes). Pure functions of the figures, so each rule is unit-tested.
//
// Per-position acceptance as vLLM counts it is unconditional: a_i = rounds whose i-th draft
// was accepted / rounds. The conditional rate c_0 = a_0, c_i = a_i / a_{i-1} is the chance
// that draft i is accepted once the drafts before it were. A healthy EAGLE drafter is best at
// position 0, where it reads the target's own hidden states; later steps read its own outputs.
// When c_0 is well below the later c_i, the hidden states fed to the first step are the weak
// link: wrong layers or positions (an engine integration bug) is the usual cause.
#pragma once

#include <optional>
#include <vector>

#include "stages/inspect/report.h"

namespace longhaul::inspect {

struct AcceptanceFigures {
  std::optional<double> rate;        // accepted / draft tokens
  std::optional<double> length;      // 1 + accepted / drafts
  std::vector<double> per_position;  // a_i, unconditional (vLLM counters)
  double drafts = 0;                 // rounds counted (0 when unknown, e.g. SGLang gauges)
  bool counters = false;             // figures are counter deltas (vLLM), not gauges
};

struct AcceptanceRules {
  // What the drafter reached in training: one value compares with position 0 (or with the
  // overall rate where per-position figures are missing); several compare position by
  // position. Empty: no comparison.
  std::vector<double> expected;
  double far_below = 0.5;   // measured < far_below * expected is flagged
  double pos0_ratio = 0.7;  // c_0 < pos0_ratio * mean(c_1..) is flagged
  double min_support = 20;  // rounds reaching a position before its c_i is trusted
};

// c_i as above; nullopt where fewer than `min_support` rounds reached position i.
std::vector<std::optional<double>> ConditionalAcceptance(const AcceptanceFigures& f,
                                                         double min_support);

// Adds findings (section "predictions") for: no drafts at all, counters that contradict each
// other, acceptance far below the expected, and a weak position 0.
void CheckAcceptance(const AcceptanceFigures& f, const AcceptanceRules& rules, Report& report);

}  // namespace longhaul::inspect

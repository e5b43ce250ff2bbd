// Internal to longhaul_workflow: a foreach stage's `early_stop` block (docs/sweeps.md, "Early
// stopping"):
//
//   early_stop: {metric: loss, mode: min, rule: asha, rungs: [1, 2, 4], eta: 2}
//   early_stop: {metric: accuracy, mode: max, rule: median, min_items: 3}
#pragma once

#include <optional>
#include <string_view>

#include "daemon/workflow/workflow.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::workflow {

// Reads the block of stage `stage`. Every problem is reported at its own key or value; nullopt
// when there was one. `metric` is required; `rungs` is required for asha and optional for
// median (there: the steps it judges at; without it, every step an item reports).
std::optional<EarlyStopSpec> ReadEarlyStop(const MapEntry& e, std::string_view stage,
                                           Diagnostics& diag);

}  // namespace longhaul::workflow

// Internal to longhaul_workflow: the checks that span stages, run once every stage is read.
#pragma once

#include <string>
#include <vector>

#include "daemon/workflow/graph.h"
#include "daemon/workflow/stage_parser.h"

namespace longhaul::workflow {

// Reports unknown, repeated and self `needs`, every cycle, and every template that is
// malformed or refers to an unknown param, an unknown stage or a stage that is not upstream.
// `sites[i]` are the templates of `stages[i]`. Returns the needs graph over `stages`
// indices, with bad edges left out. Every well-formed tag reference goes to `tag_uses`.
NeedsGraph ValidateStages(const std::vector<ParsedStage>& stages,
                          const std::vector<std::vector<TemplateSite>>& sites,
                          const std::vector<std::string>& param_names, Diagnostics& diag,
                          std::vector<TagUse>* tag_uses);

}  // namespace longhaul::workflow

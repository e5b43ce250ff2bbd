// Limits that protect the coordinator from a workflow file that is too big to be a mistake:
// ParseWorkflow refuses such a file, naming it and the limit, before it reads the YAML (size)
// or before it validates the stages (count). docs/workflow-format.md lists them.
#pragma once

#include <cstddef>

namespace longhaul::workflow {

inline constexpr size_t kMaxWorkflowBytes = 8 << 20;  // 8 MiB of YAML
inline constexpr size_t kMaxStages = 100000;

}  // namespace longhaul::workflow

// Limits that protect the coordinator from a workflow file that is too big to be a mistake:
// ParseWorkflow refuses such a file, naming it and the limit, before it reads the YAML (size)
// or before it validates the stages (count). docs/workflow-format.md lists them.
#pragma once

#include <cstddef>

namespace longhaul::workflow {

// 32 MiB: a 100,000-stage file with a few keys per stage is 6-20 MiB; a submission carries the
// text in one message, and the coordinator receives messages of up to 64 MiB.
inline constexpr size_t kMaxWorkflowBytes = 32 << 20;
// Counted after `foreach` expansion: what the scheduler will hold in memory for one run.
inline constexpr size_t kMaxStages = 200'000;

}  // namespace longhaul::workflow

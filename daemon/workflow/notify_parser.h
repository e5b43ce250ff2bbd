// Internal to longhaul_workflow: the workflow's `notify:` block (docs/workflow-format.md).
#pragma once

#include "daemon/workflow/workflow.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::workflow {

// Reads `notify: {on: [...], webhook: URL | [URL...], format: json|slack, command: [argv]}`
// into *out, reporting every problem (unknown key or kind, a URL that is not http://, an empty
// command) through `diag`.
void ReadNotify(const MapEntry& e, NotifySpec* out, Diagnostics& diag);

}  // namespace longhaul::workflow

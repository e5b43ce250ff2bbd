// A foreach stage of a workflow file as a sweep: its items, each with its values, and its
// `early_stop` (docs/sweeps.md). longhauld's GetSweep (`longhaul show RUN --sweep STAGE`, the web
// UI's sweep page) reads it from the text the run was submitted with.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {

struct SweepItem {
  std::string stage;  // "train-3-vllm"
  // Its value of each key, in the foreach's key order ("" for a plain list's one value).
  std::vector<std::pair<std::string, std::string>> values;
};

struct Sweep {
  std::vector<SweepItem> items;                     // in file order, the first key outermost
  std::shared_ptr<const EarlyStopSpec> early_stop;  // null when the stage has none
};

// The sweep of stage `stage` (as written, e.g. "train") in workflow file `text`.
// InvalidArgument when the file does not parse or the stage has no foreach, NotFound when it
// has no such stage.
Result<Sweep> ReadSweep(std::string_view text, std::string_view stage);

}  // namespace longhaul::workflow

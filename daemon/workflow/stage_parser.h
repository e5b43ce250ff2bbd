// Internal to longhaul_workflow: one stage's mapping (or `defaults`) to fields, and the merge
// of `defaults` into each stage. Cross-stage checks (needs, cycles, templates) are in
// validate.h.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/workflow/workflow.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::workflow {

// Fields that `defaults` and a stage can both set; unset ones fall through to the next layer
// (stage, then defaults, then the built-in values of StageSpec), field by field.
struct OverridableFields {
  std::optional<int> retry_limit;
  std::optional<int> retry_infra_limit;
  std::optional<int64_t> retry_backoff_ms;
  std::optional<int64_t> retry_max_backoff_ms;
  std::optional<FailureKinds> retry_on;
  std::optional<std::vector<int>> retry_exit_codes;
  std::optional<double> cpus;
  std::optional<int64_t> memory_bytes;
  std::optional<int> gpus;
  std::optional<int64_t> timeout_ms;
  std::optional<int64_t> stall_timeout_ms;
  std::optional<int64_t> ready_timeout_ms;
  std::optional<int64_t> gpu_idle_ms;
  std::optional<bool> gpu_idle_fail;
  std::optional<bool> preflight;
  std::optional<bool> preemptible;
  std::optional<int64_t> preempt_notice_ms;
  SourcePos ready_timeout_pos;
  SourcePos preflight_pos;
  std::optional<int64_t> grace_ms;
  std::map<std::string, Scalar> env;          // merged by variable name
  std::optional<NodeSelector> node_selector;  // replaced whole, not merged by key
};

// A template as written in the file, with where it is, for validation messages.
struct TemplateSite {
  Scalar value;
  std::string field;  // "run[2]", "env HF_HOME"
};

struct ParsedStage {
  StageSpec* spec = nullptr;  // own fields; defaults not merged yet. Not owned: the specs are
                              // the Workflow's, so that a big file's are never copied.
  OverridableFields fields;   // as the stage wrote them
  std::vector<Scalar> needs;  // as written, with positions
  std::vector<Scalar> run;    // as written, with positions
  size_t file_index = 0;
};

// Reads `defaults`. Keys that only a stage may have are reported as unknown.
OverridableFields ParseDefaults(const MapEntry& defaults, Diagnostics& diag);

// Reads one entry of `stages` into `*spec` (a default StageSpec, which must outlive the
// result): a stage with whatever was valid, every problem reported. Even a stage whose value
// is not a mapping comes back (with its name), so that the stages that need it are not
// reported too.
ParsedStage ParseStage(const MapEntry& entry, StageSpec* spec, Diagnostics& diag);

// Fills stage.spec from the stage's own fields over `defaults` over built-in values.
// Returns the templates of the merged stage (run, then env) for validation.
std::vector<TemplateSite> ApplyDefaults(const OverridableFields& defaults, ParsedStage& stage);

}  // namespace longhaul::workflow

// Fuzzes ParseWorkflow (daemon/workflow/workflow.h): the YAML reader, the stage parser and the
// validator. A workflow it accepts must hold what the header promises: stages in topological
// order with unique names, and every param resolvable; then every run and env template is
// expanded as for a cache key (unbound references kept).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "daemon/workflow/template.h"
#include "daemon/workflow/workflow.h"
#include "tests/fuzz/fuzz_check.h"

namespace wf = longhaul::workflow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  longhaul::Result<wf::Workflow> parsed = wf::ParseWorkflow(text, "fuzz.yaml");
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument,
               "a bad workflow is InvalidArgument");
    FUZZ_CHECK(parsed.status().message().find("fuzz.yaml") != std::string_view::npos,
               "the error names the file");
    return 0;
  }
  const wf::Workflow& w = *parsed;
  std::set<std::string> seen;
  for (const wf::StageSpec& stage : w.stages) {
    for (const std::string& need : stage.needs) {
      FUZZ_CHECK(seen.count(need) == 1, "a stage comes after the stages it needs");
    }
    FUZZ_CHECK(seen.insert(stage.name).second, "stage names are unique");
    FUZZ_CHECK(w.FindStage(stage.name) != nullptr, "FindStage finds every stage");
    FUZZ_CHECK(!stage.run.empty(), "a stage has a program");
  }
  longhaul::Result<std::map<std::string, std::string>> params = wf::ResolveParams(w, {});
  FUZZ_CHECK(params.ok(), "the defaults of a valid workflow resolve");
  wf::TemplateContext ctx;
  ctx.params = &*params;
  ctx.keep_unbound = true;
  for (const wf::StageSpec& stage : w.stages) {
    for (const std::string& arg : stage.run) (void)wf::ExpandTemplate(arg, ctx);
    for (const auto& [name, value] : stage.env) (void)wf::ExpandTemplate(value, ctx);
  }
  return 0;
}

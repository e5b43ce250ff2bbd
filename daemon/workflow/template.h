// Templates in `run` and `env` values: ${params.NAME}, ${STAGE.outputs.NAME}, ${output_dir},
// ${run.id}, ${workflow.dir} (the directory of the submitted workflow file, for data that
// ships beside it; a runtime binding like ${output_dir}), ${tags.TAG.outputs.NAME} and
// ${tags.TAG.run} (a named stage result of an earlier run, resolved at submission:
// docs/workflow-format.md, "Tags"). "$${" is a literal "${". A template expands to exactly one
// string, so a value can never inject extra argv elements.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace longhaul::workflow {

struct TemplateRef {
  enum Kind { kParam, kOutput, kOutputDir, kRunId, kWorkflowDir, kTagOutput, kTagRun };
  Kind kind;
  std::string stage;  // kOutput: the stage; kTagOutput, kTagRun: the tag's name
  std::string name;   // kParam: param name; kOutput, kTagOutput: output name
  size_t offset = 0;  // of "${" in the template, for column numbers
};

// The references in `tmpl`, or InvalidArgument for an unclosed "${" or an unknown form
// ("${foo}", "${a.b}"), naming the offset; that offset also goes to `*error_offset` if given.
Result<std::vector<TemplateRef>> ParseTemplate(std::string_view tmpl,
                                               size_t* error_offset = nullptr);

struct TemplateContext {
  const std::map<std::string, std::string>* params = nullptr;
  // Returns the output `name` of stage `stage`, or nullopt when it reported none.
  std::function<std::optional<std::string>(const std::string& stage, const std::string& name)>
      outputs;
  std::optional<std::string> output_dir;
  std::optional<int64_t> run_id;
  std::optional<std::string> workflow_dir;
  // Returns the value of a tag reference by its TagRefKey ("best-drafter.outputs.drafter",
  // "best-drafter.run"), or nullopt when the submission resolved none.
  std::function<std::optional<std::string>(const std::string& key)> tags;
  // When true, references with no value in the context (outputs or tags with no callback, no
  // output_dir, no run_id) are kept as written instead of failing. Used for cache keys,
  // which hash templates before upstream outputs are substituted.
  bool keep_unbound = false;
};

// True for names that templates can refer to: stage, param and output names.
// [A-Za-z_][A-Za-z0-9_-]*, so "${a.outputs.b}" splits on dots without ambiguity.
bool IsTemplateName(std::string_view name);

// "TAG.outputs.NAME" for kTagOutput, "TAG.run" for kTagRun: how a run records the values its
// tag references resolved to. "" for the other kinds.
std::string TagRefKey(const TemplateRef& ref);

// Expands every reference. FailedPrecondition names the first reference with no value
// (e.g. "stage 'target_server' reported no output 'endpoint'").
Result<std::string> ExpandTemplate(std::string_view tmpl, const TemplateContext& ctx);

}  // namespace longhaul::workflow

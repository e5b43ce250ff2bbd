// Fuzzes the `${...}` templates of `run` and `env` values (daemon/workflow/template.h):
// ParseTemplate and ExpandTemplate on the same text, with every kind of reference bound (the
// first byte picks which are bound and whether unbound ones are kept). The two must agree on
// what is malformed, and a text without '$' expands to itself.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "daemon/workflow/template.h"
#include "tests/fuzz/fuzz_check.h"

namespace wf = longhaul::workflow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::string_view tmpl(reinterpret_cast<const char*>(data + 1), size - 1);

  size_t error_offset = static_cast<size_t>(-1);
  longhaul::Result<std::vector<wf::TemplateRef>> refs = wf::ParseTemplate(tmpl, &error_offset);
  if (!refs.ok()) {
    FUZZ_CHECK(refs.status().code() == absl::StatusCode::kInvalidArgument, "parse error code");
    FUZZ_CHECK(error_offset < tmpl.size(), "error offset inside the template");
  } else {
    for (const wf::TemplateRef& ref : *refs) {
      FUZZ_CHECK(ref.offset < tmpl.size(), "reference offset inside the template");
      if (ref.kind == wf::TemplateRef::kParam) FUZZ_CHECK(wf::IsTemplateName(ref.name), "param");
      if (ref.kind == wf::TemplateRef::kOutput) {
        FUZZ_CHECK(wf::IsTemplateName(ref.stage) && wf::IsTemplateName(ref.name), "output");
      }
    }
  }

  const std::map<std::string, std::string> params = {
      {"model", "/models/x"}, {"n", "8"}, {"a-b", "${params.n}"}, {"_", "$${x}"}};
  wf::TemplateContext ctx;
  if (flags & 1) ctx.params = &params;
  if (flags & 2) {
    ctx.outputs = [](const std::string& stage, const std::string& name)
        -> std::optional<std::string> {
      if (stage.size() % 2 == 0) return std::nullopt;
      return stage + "/" + name;
    };
  }
  if (flags & 4) ctx.output_dir = "/out/dir";
  if (flags & 8) ctx.run_id = 42;
  if (flags & 16) ctx.workflow_dir = "/wf";
  ctx.keep_unbound = (flags & 32) != 0;

  longhaul::Result<std::string> out = wf::ExpandTemplate(tmpl, ctx);
  if (!refs.ok()) {
    FUZZ_CHECK(!out.ok() && out.status().code() == absl::StatusCode::kInvalidArgument,
               "ExpandTemplate refuses what ParseTemplate refuses");
  } else if (!out.ok()) {
    FUZZ_CHECK(out.status().code() == absl::StatusCode::kFailedPrecondition,
               "a well-formed template fails only for a missing value");
  }
  if (tmpl.find('$') == std::string_view::npos) {
    FUZZ_CHECK(out.ok() && *out == tmpl, "a text without '$' expands to itself");
  }
  return 0;
}

#include "daemon/workflow/template.h"

#include <cctype>

#include "core/strings.h"

namespace longhaul::workflow {
namespace {

constexpr std::string_view kForms =
    "${params.NAME}, ${STAGE.outputs.NAME}, ${output_dir}, ${run.id}, ${workflow.dir}, "
    "${tags.TAG.outputs.NAME} or ${tags.TAG.run}";

// One piece of a template: literal text, or a reference with the text it was written as.
struct Piece {
  std::string literal;
  std::optional<TemplateRef> ref;
  std::string written;  // "${...}" as in the template, for keep_unbound
};

Result<TemplateRef> ParseRef(std::string_view body, size_t offset) {
  std::vector<std::string> parts = StrSplit(body, '.');
  TemplateRef ref;
  ref.offset = offset;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat("'${", body, "}' at offset ", offset, ": ", why, " (expected ", kForms,
               "; write '$${", body, "}' for a literal '${", body, "}', as for a shell)"));
  };
  if (parts.size() == 1 && parts[0] == "output_dir") {
    ref.kind = TemplateRef::kOutputDir;
    return ref;
  }
  if (parts.size() == 2 && parts[0] == "run" && parts[1] == "id") {
    ref.kind = TemplateRef::kRunId;
    return ref;
  }
  if (parts.size() == 2 && parts[0] == "workflow" && parts[1] == "dir") {
    ref.kind = TemplateRef::kWorkflowDir;
    return ref;
  }
  if (parts.size() == 2 && parts[0] == "params") {
    if (!IsTemplateName(parts[1])) return bad(StrCat("'", parts[1], "' is not a param name"));
    ref.kind = TemplateRef::kParam;
    ref.name = parts[1];
    return ref;
  }
  if (parts.size() == 4 && parts[0] == "tags" && parts[2] == "outputs") {
    if (!IsTemplateName(parts[1])) return bad(StrCat("'", parts[1], "' is not a tag name"));
    if (!IsTemplateName(parts[3])) return bad(StrCat("'", parts[3], "' is not an output name"));
    ref.kind = TemplateRef::kTagOutput;
    ref.stage = parts[1];
    ref.name = parts[3];
    return ref;
  }
  // "${tags.outputs.run}" stays stage 'tags''s output 'run', as before tags existed.
  if (parts.size() == 3 && parts[0] == "tags" && parts[2] == "run" && parts[1] != "outputs") {
    if (!IsTemplateName(parts[1])) return bad(StrCat("'", parts[1], "' is not a tag name"));
    ref.kind = TemplateRef::kTagRun;
    ref.stage = parts[1];
    return ref;
  }
  if (parts.size() == 3 && parts[1] == "outputs") {
    if (!IsTemplateName(parts[0])) return bad(StrCat("'", parts[0], "' is not a stage name"));
    if (!IsTemplateName(parts[2])) return bad(StrCat("'", parts[2], "' is not an output name"));
    ref.kind = TemplateRef::kOutput;
    ref.stage = parts[0];
    ref.name = parts[2];
    return ref;
  }
  return bad("unknown reference");
}

Result<std::vector<Piece>> Split(std::string_view tmpl, size_t* error_offset) {
  std::vector<Piece> pieces;
  std::string literal;
  size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl.compare(i, 3, "$${") == 0) {
      literal += "${";
      i += 3;
      continue;
    }
    if (tmpl.compare(i, 2, "${") != 0) {
      literal += tmpl[i++];
      continue;
    }
    size_t close = tmpl.find('}', i + 2);
    if (close == std::string_view::npos) {
      if (error_offset) *error_offset = i;
      return absl::InvalidArgumentError(
          StrCat("unclosed '${' at offset ", i, " (write '$${' for a literal '${')"));
    }
    Result<TemplateRef> parsed = ParseRef(tmpl.substr(i + 2, close - i - 2), i);
    if (!parsed.ok()) {
      if (error_offset) *error_offset = i;
      return parsed.status();
    }
    TemplateRef ref = std::move(parsed).value();
    if (!literal.empty()) pieces.push_back(Piece{std::move(literal), std::nullopt, ""});
    literal.clear();
    pieces.push_back(Piece{"", std::move(ref), std::string(tmpl.substr(i, close + 1 - i))});
    i = close + 1;
  }
  if (!literal.empty()) pieces.push_back(Piece{std::move(literal), std::nullopt, ""});
  return pieces;
}

}  // namespace

bool IsTemplateName(std::string_view name) {
  if (name.empty()) return false;
  char first = name[0];
  if (!(std::isalpha(static_cast<unsigned char>(first)) || first == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

Result<std::vector<TemplateRef>> ParseTemplate(std::string_view tmpl, size_t* error_offset) {
  ASSIGN_OR_RETURN(std::vector<Piece> pieces, Split(tmpl, error_offset));
  std::vector<TemplateRef> refs;
  for (Piece& p : pieces) {
    if (p.ref) refs.push_back(std::move(*p.ref));
  }
  return refs;
}

std::string TagRefKey(const TemplateRef& ref) {
  if (ref.kind == TemplateRef::kTagOutput) return StrCat(ref.stage, ".outputs.", ref.name);
  if (ref.kind == TemplateRef::kTagRun) return StrCat(ref.stage, ".run");
  return "";
}

Result<std::string> ExpandTemplate(std::string_view tmpl, const TemplateContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Piece> pieces, Split(tmpl, nullptr));
  std::string out;
  for (const Piece& p : pieces) {
    if (!p.ref) {
      out += p.literal;
      continue;
    }
    const TemplateRef& ref = *p.ref;
    switch (ref.kind) {
      case TemplateRef::kParam: {
        if (ctx.params) {
          auto it = ctx.params->find(ref.name);
          if (it != ctx.params->end()) {
            out += it->second;
            break;
          }
        }
        return absl::FailedPreconditionError(
            StrCat(p.written, ": no value for param '", ref.name, "'"));
      }
      case TemplateRef::kOutput: {
        if (!ctx.outputs) {
          if (!ctx.keep_unbound) {
            return absl::FailedPreconditionError(
                StrCat(p.written, ": outputs of stage '", ref.stage, "' are not available"));
          }
          out += p.written;
          break;
        }
        std::optional<std::string> value = ctx.outputs(ref.stage, ref.name);
        if (!value) {
          return absl::FailedPreconditionError(
              StrCat("stage '", ref.stage, "' reported no output '", ref.name, "'"));
        }
        out += *value;
        break;
      }
      case TemplateRef::kTagOutput:
      case TemplateRef::kTagRun: {
        std::optional<std::string> value;
        if (ctx.tags) value = ctx.tags(TagRefKey(ref));
        if (value) {
          out += *value;
        } else if (!ctx.tags && ctx.keep_unbound) {
          out += p.written;
        } else {
          return absl::FailedPreconditionError(
              StrCat(p.written, ": the submission resolved no value for tag '", ref.stage, "'"));
        }
        break;
      }
      case TemplateRef::kOutputDir:
        if (ctx.output_dir) {
          out += *ctx.output_dir;
        } else if (ctx.keep_unbound) {
          out += p.written;
        } else {
          return absl::FailedPreconditionError("${output_dir}: no output dir is bound");
        }
        break;
      case TemplateRef::kRunId:
        if (ctx.run_id) {
          out += std::to_string(*ctx.run_id);
        } else if (ctx.keep_unbound) {
          out += p.written;
        } else {
          return absl::FailedPreconditionError("${run.id}: no run id is bound");
        }
        break;
      case TemplateRef::kWorkflowDir:
        if (ctx.workflow_dir) {
          out += *ctx.workflow_dir;
        } else if (ctx.keep_unbound) {
          out += p.written;
        } else {
          return absl::FailedPreconditionError(
              "${workflow.dir}: the run's workflow file has no absolute path (submit it from a "
              "file with the longhaul CLI)");
        }
        break;
    }
  }
  return out;
}

}  // namespace longhaul::workflow

#include "daemon/scheduler/tag_resolve.h"

#include <set>

#include "core/strings.h"
#include "daemon/workflow/template.h"

namespace longhaul::scheduler {

Status CheckTagName(const std::string& name) {
  if (!workflow::IsTemplateName(name) || name == "outputs") {
    return absl::InvalidArgumentError(
        StrCat("'", name, "' is not a tag name (letters, digits, '_' and '-', starting with a ",
               "letter or '_'; not 'outputs')"));
  }
  return OkStatus();
}

v1::Tag TagRowToProto(const store::TagRow& t) {
  v1::Tag out;
  out.set_name(t.name);
  out.set_run_id(t.run_id);
  out.set_stage(t.stage);
  out.set_attempt_id(t.attempt_id.value_or(0));
  out.set_set_by(t.set_by);
  out.set_set_at_ms(t.set_at_ms);
  return out;
}

Result<TagResolution> ResolveTags(store::SqliteStore* store, const workflow::Workflow& wf) {
  TagResolution out;
  if (wf.tag_uses.empty()) return out;
  std::set<std::string> names;
  for (const workflow::TagUse& use : wf.tag_uses) names.insert(use.tag);
  ASSIGN_OR_RETURN(std::vector<store::TagTarget> targets,
                   store->ReadTagTargets(std::vector<std::string>(names.begin(), names.end())));
  std::map<std::string, const store::TagTarget*> by_name;
  for (const store::TagTarget& t : targets) by_name[t.tag.name] = &t;

  std::vector<std::string> errors;
  std::set<std::string> recorded;
  for (const workflow::TagUse& use : wf.tag_uses) {
    std::string written = use.output.empty()
                              ? StrCat("${tags.", use.tag, ".run}")
                              : StrCat("${tags.", use.tag, ".outputs.", use.output, "}");
    std::string at = StrCat(wf.path, ":", use.pos.line, ":", use.pos.column, ": ", use.where, ": ",
                            written, ": ");
    auto it = by_name.find(use.tag);
    if (it == by_name.end()) {
      errors.push_back(StrCat(at, "no tag '", use.tag, "' (longhaul tags lists them; longhaul ",
                              "tag RUN STAGE ", use.tag, " sets it)"));
      continue;
    }
    const store::TagTarget& t = *it->second;
    std::string source = StrCat("run ", t.tag.run_id, " ", t.tag.stage);
    std::string value;
    if (use.output.empty()) {
      value = StrCat(t.tag.run_id);
    } else {
      auto out_it = t.outputs.find(use.output);
      if (out_it == t.outputs.end()) {
        std::vector<std::string> have;
        for (const auto& [k, v] : t.outputs) have.push_back(k);
        errors.push_back(StrCat(at, "tag '", use.tag, "' (", source, ") has no output '",
                                use.output, "' (",
                                have.empty() ? std::string("it recorded none")
                                             : StrCat("it recorded: ", StrJoin(have, ", ")),
                                ")"));
        continue;
      }
      value = out_it->second;
    }
    out.bindings.values[use.key] = value;
    out.bindings.sources[use.tag] = source;
    if (recorded.insert(use.key).second) {
      out.uses.push_back(
          store::TagUseRow{use.key, use.tag, value, t.tag.run_id, t.tag.stage, t.tag.stage_id});
    }
  }
  if (!errors.empty()) return absl::InvalidArgumentError(StrJoin(errors, "\n"));
  return out;
}

}  // namespace longhaul::scheduler

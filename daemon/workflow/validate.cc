#include "daemon/workflow/validate.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/strings.h"
#include "daemon/workflow/template.h"

namespace longhaul::workflow {
namespace {

SourcePos At(const Scalar& s, size_t offset) {
  // Exact for templates written on one line, the usual case for argv elements.
  return SourcePos{s.pos.line, s.pos.column + static_cast<int>(offset) + (s.quoted ? 1 : 0)};
}

NeedsGraph CheckNeeds(const std::vector<ParsedStage>& stages,
                      const std::map<std::string, int>& index,
                      const std::vector<std::string>& names, Diagnostics& diag) {
  NeedsGraph graph(stages.size());
  for (size_t i = 0; i < stages.size(); ++i) {
    const std::string& name = stages[i].spec->name;
    std::set<std::string> seen;
    for (const Scalar& need : stages[i].needs) {
      if (need.text == name) {
        diag.Add(need.pos, StrCat("stage '", name, "' needs itself"));
        continue;
      }
      auto it = index.find(need.text);
      if (it == index.end()) {
        diag.Add(need.pos, StrCat("stage '", name, "' needs '", need.text,
                                  "', which is not a stage", DidYouMean(need.text, names)));
        continue;
      }
      if (!seen.insert(need.text).second) {
        diag.Add(need.pos, StrCat("stage '", name, "' lists '", need.text, "' twice in needs"));
        continue;
      }
      graph[i].push_back(it->second);
    }
  }
  return graph;
}

void CheckCycles(const std::vector<ParsedStage>& stages, const NeedsGraph& graph,
                 Diagnostics& diag) {
  for (const std::vector<int>& cycle : FindCycles(graph)) {
    std::vector<std::string> names;
    for (int v : cycle) names.push_back(stages[v].spec->name);
    names.push_back(names.front());
    diag.Add(stages[cycle.front()].spec->pos,
             StrCat("cycle: ", StrJoin(names, " -> "), " (each stage needs the next)"));
  }
}

void CheckTemplate(const ParsedStage& stage, int stage_index, const TemplateSite& site,
                   const std::map<std::string, int>& index, Reachability& upstream,
                   const std::vector<std::string>& param_names,
                   const std::vector<std::string>& stage_names, Diagnostics& diag,
                   std::vector<TagUse>* tag_uses) {
  std::string where = StrCat(site.field, " in stage '", stage.spec->name, "'");
  size_t error_offset = 0;
  Result<std::vector<TemplateRef>> refs = ParseTemplate(site.value.text, &error_offset);
  if (!refs.ok()) {
    diag.Add(At(site.value, error_offset),
             StrCat(where, ": malformed template: ", ToStd(refs.status().message())));
    return;
  }
  for (const TemplateRef& ref : *refs) {
    SourcePos pos = At(site.value, ref.offset);
    if (ref.kind == TemplateRef::kTagOutput || ref.kind == TemplateRef::kTagRun) {
      tag_uses->push_back(
          TagUse{stage.spec->name, ref.stage, ref.name, TagRefKey(ref), where, pos});
    } else if (ref.kind == TemplateRef::kParam) {
      if (std::find(param_names.begin(), param_names.end(), ref.name) != param_names.end()) {
        continue;
      }
      std::string hint = param_names.empty() ? " (this workflow has no params)"
                                             : DidYouMean(ref.name, param_names);
      diag.Add(pos, StrCat(where, ": ${params.", ref.name, "} is not a param", hint));
    } else if (ref.kind == TemplateRef::kOutput) {
      std::string written = StrCat("${", ref.stage, ".outputs.", ref.name, "}");
      auto it = index.find(ref.stage);
      if (ref.stage == stage.spec->name) {
        diag.Add(pos, StrCat(where, ": ", written, ": a stage cannot use its own outputs"));
      } else if (it == index.end()) {
        diag.Add(pos, StrCat(where, ": ", written, ": '", ref.stage, "' is not a stage",
                             DidYouMean(ref.stage, stage_names)));
      } else if (!upstream.Needs(stage_index, it->second)) {
        diag.Add(pos, StrCat(where, ": ", written, ": stage '", stage.spec->name,
                             "' does not need '", ref.stage, "' (add it to needs)"));
      }
    }
  }
}

}  // namespace

NeedsGraph ValidateStages(const std::vector<ParsedStage>& stages,
                          const std::vector<std::vector<TemplateSite>>& sites,
                          const std::vector<std::string>& param_names, Diagnostics& diag,
                          std::vector<TagUse>* tag_uses) {
  std::map<std::string, int> index;
  std::vector<std::string> names;
  for (size_t i = 0; i < stages.size(); ++i) {
    index[stages[i].spec->name] = static_cast<int>(i);
    names.push_back(stages[i].spec->name);
  }
  NeedsGraph graph = CheckNeeds(stages, index, names, diag);
  CheckCycles(stages, graph, diag);
  // A service starts only when a dependent must run: one that nothing needs would never run.
  std::vector<bool> needed(stages.size(), false);
  for (const auto& deps : graph) {
    for (int d : deps) {
      if (d >= 0 && d < static_cast<int>(needed.size())) needed[d] = true;
    }
  }
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].spec->kind == StageKind::kService && !needed[i]) {
      diag.Add(stages[i].spec->pos,
               StrCat("service '", stages[i].spec->name,
                      "' is needed by no stage, so it would never start (a service starts when "
                      "a stage that needs it must run; use kind: task for a job of its own)"));
    }
  }
  Reachability upstream(graph);
  for (size_t i = 0; i < stages.size(); ++i) {
    for (const TemplateSite& site : sites[i]) {
      CheckTemplate(stages[i], static_cast<int>(i), site, index, upstream, param_names, names, diag,
                    tag_uses);
    }
  }
  return graph;
}

}  // namespace longhaul::workflow

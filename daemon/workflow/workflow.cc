#include "daemon/workflow/workflow.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "core/memory_policy.h"
#include "core/strings.h"
#include "daemon/workflow/early_stop_parser.h"
#include "daemon/workflow/foreach.h"
#include "daemon/workflow/graph.h"
#include "daemon/workflow/limits.h"
#include "daemon/workflow/notify_parser.h"
#include "daemon/workflow/stage_parser.h"
#include "daemon/workflow/template.h"
#include "daemon/workflow/validate.h"
#include "daemon/workflow/yaml_reader.h"
#include "daemon/workflow/yaml_tree.h"

namespace longhaul::workflow {
namespace {

const std::vector<std::string> kTopKeys = {"name",   "description", "params",    "defaults",
                                           "stages", "notify",      "retention", "priority",
                                           "budget"};
const std::vector<std::string> kRetentionKeys = {"age", "keep"};
const std::vector<std::string> kBudgetKeys = {"gpu_hours", "hard"};

// `priority: high | normal | low`.
void ReadPriority(const MapEntry& e, std::string* out, Diagnostics& diag) {
  std::optional<Scalar> p = ReadScalar(e, "priority", diag);
  if (!p) return;
  if (!PriorityRank(p->text)) {
    diag.Add(e.value_pos, StrCat("priority: unknown class '", p->text, "' (high, normal or low)"));
    return;
  }
  *out = p->text;
}

// `budget: {gpu_hours: 10, hard: false}`: gpu_hours is required.
void ReadBudget(const MapEntry& e, BudgetSpec* out, Diagnostics& diag) {
  if (!ExpectMap(e, "budget", diag)) return;
  for (const MapEntry& k : ReadMap(e.value, "budget", "key", &kBudgetKeys, diag)) {
    if (k.key == "gpu_hours") {
      out->gpu_hours = ReadPositiveNumber(k, "budget.gpu_hours", diag);
    } else if (k.key == "hard") {
      if (auto b = ReadBool(k, "budget.hard", diag)) out->hard = *b;
    }
  }
  if (!FindMapEntry(e.value, "gpu_hours")) {
    diag.Add(e.key_pos, "budget: expected gpu_hours (a number > 0), and optionally hard");
  }
}

// `retention: {age: 30d, keep: 20}`: at least one of the two; 0 turns a rule off.
void ReadRetention(const MapEntry& e, RetentionSpec* out, Diagnostics& diag) {
  if (!ExpectMap(e, "retention", diag)) return;
  for (const MapEntry& k : ReadMap(e.value, "retention", "key", &kRetentionKeys, diag)) {
    if (k.key == "age") {
      out->age_ms = ReadDuration(k, "retention.age", /*allow_zero=*/true, diag);
    } else if (k.key == "keep") {
      if (auto n = ReadInt(k, "retention.keep", 0, 1'000'000, diag)) {
        out->keep = static_cast<int>(*n);
      }
    }
  }
  if (e.value.size() == 0) {
    diag.Add(e.key_pos, "retention: expected age (a duration) or keep (a number of runs), or both");
  }
}
// These would read like the other template forms (${params.x}, ${run.id}, ${output_dir}).
const std::vector<std::string> kReservedStageNames = {"params", "run", "output_dir"};

bool IsWorkflowName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void ReadParams(const MapEntry& e, Workflow& wf, Diagnostics& diag) {
  if (!ExpectMap(e, "params", diag)) return;
  for (const MapEntry& p : ReadMap(e.value, "params", "param", nullptr, diag)) {
    if (!IsTemplateName(p.key)) {
      diag.Add(p.key_pos,
               StrCat("param '", p.key, "': a name is a letter or _ then letters, digits, _ or -"));
      continue;
    }
    std::optional<Scalar> value = ReadScalar(p, StrCat("param '", p.key, "'"), diag);
    if (!value) continue;
    wf.params.push_back(ParamSpec{p.key, value->text, p.key_pos});
  }
}

// The stage's `foreach`, when it has one.
std::optional<Foreach> FindForeach(const MapEntry& s, Diagnostics& diag) {
  std::optional<MapEntry> e = FindMapEntry(s.value, "foreach");
  if (!e) return std::nullopt;
  return ReadForeach(*e, StrCat("stage '", s.key, "'"), diag);
}

// The stage's `early_stop`, shared by its items; only a foreach stage may have one.
std::shared_ptr<const EarlyStopSpec> FindEarlyStop(const MapEntry& s, bool is_foreach,
                                                   Diagnostics& diag) {
  std::optional<MapEntry> e = FindMapEntry(s.value, "early_stop");
  if (!e) return nullptr;
  if (!is_foreach) {
    diag.Add(e->key_pos,
             StrCat("early_stop in stage '", s.key, "': only a foreach stage (a sweep) has one"));
    return nullptr;
  }
  std::optional<EarlyStopSpec> spec = ReadEarlyStop(*e, s.key, diag);
  if (!spec) return nullptr;
  return std::make_shared<const EarlyStopSpec>(std::move(*spec));
}

// The stages as read, in file order (a foreach stage as its items), each with its spec in
// `specs`; also reports every problem of each stage alone.
std::vector<ParsedStage> ReadStages(const MapEntry& e, std::vector<StageSpec>& specs,
                                    Diagnostics& diag) {
  std::vector<ParsedStage> stages;
  if (!ExpectMap(e, "stages", diag)) return stages;
  if (e.value.size() == 0) {
    diag.Add(e.value_pos, "stages: expected at least one stage");
    return stages;
  }
  std::vector<MapEntry> entries = ReadMap(e.value, "stages", "stage", nullptr, diag);
  std::vector<std::unique_ptr<Foreach>> foreach;  // a pointer, not 100 bytes, per stage
  foreach.reserve(entries.size());
  size_t total = 0;
  for (const MapEntry& s : entries) {
    std::optional<Foreach> f = FindForeach(s, diag);
    foreach.push_back(f ? std::make_unique<Foreach>(std::move(*f)) : nullptr);
    size_t n = foreach.back() ? foreach.back()->Count() : 1;
    total = n > SIZE_MAX - total ? SIZE_MAX : total + n;
  }
  if (total > kMaxStages) {
    diag.Add(e.value_pos, StrCat(total == SIZE_MAX ? "too many" : StrCat(total),
                                 " stages once foreach is expanded, over the limit of ",
                                 kMaxStages, " stages in one workflow"));
    return stages;
  }
  stages.reserve(total);
  specs.reserve(total);  // no reallocation: ParsedStage points at its spec
  NoteBigBuffer(stages.data(), stages.capacity() * sizeof(ParsedStage));
  NoteBigBuffer(specs.data(), specs.capacity() * sizeof(StageSpec));
  std::map<std::string, std::vector<std::pair<int, ForeachItem>>> items;
  std::vector<const ForeachItem*> item_of;
  item_of.reserve(total);
  // Names made by foreach may meet others. The views are of `entries` and `specs`, neither of
  // which grows from here on.
  std::unordered_map<std::string_view, int> first_line;
  first_line.reserve(total);
  for (size_t k = 0; k < entries.size(); ++k) {
    const MapEntry& s = entries[k];
    if (!IsTemplateName(s.key)) {
      diag.Add(s.key_pos, StrCat("stage name '", s.key,
                                 "': a name is a letter or _ then letters, digits, _ or -"));
    } else if (std::find(kReservedStageNames.begin(), kReservedStageNames.end(), s.key) !=
               kReservedStageNames.end()) {
      diag.Add(s.key_pos, StrCat("stage name '", s.key, "' is reserved (templates use it)"));
    }
    std::shared_ptr<const EarlyStopSpec> early_stop = FindEarlyStop(s, foreach[k] != nullptr, diag);
    if (!foreach[k]) {
      ParsedStage stage = ParseStage(s, &specs.emplace_back(), diag);
      stage.file_index = stages.size();
      auto [seen, inserted] = first_line.emplace(s.key, s.key_pos.line);
      if (!inserted) {
        diag.Add(s.key_pos, StrCat("stage '", s.key, "': a foreach (line ", seen->second,
                                   ") already made a stage of that name"));
      }
      stages.push_back(std::move(stage));
      item_of.push_back(nullptr);
      continue;
    }
    StageSpec base_spec;
    ParsedStage base = ParseStage(s, &base_spec, diag);
    base_spec.early_stop = std::move(early_stop);
    std::vector<std::pair<int, ForeachItem>>& made = items[s.key];
    for (ForeachItem& item : ExpandForeach(*foreach[k])) {
      ParsedStage stage = base;
      stage.spec = &specs.emplace_back(base_spec);
      stage.spec->name = StrCat(s.key, "-", item.suffix);
      if (!SubstituteItem(*foreach[k], item, s.key, stage, diag)) break;  // once, not per item
      auto [seen, inserted] = first_line.emplace(stage.spec->name, s.key_pos.line);
      if (!inserted) {
        diag.Add(s.key_pos, StrCat("foreach in stage '", s.key, "' makes stage '",
                                   stage.spec->name, "', a name already taken (line ",
                                   seen->second, ")"));
      }
      stage.file_index = stages.size();
      made.emplace_back(static_cast<int>(stages.size()), std::move(item));
      stages.push_back(std::move(stage));
      item_of.push_back(nullptr);
    }
  }
  // Pointers into `items` only now: its vectors no longer grow.
  for (const auto& [name, list] : items) {
    for (const auto& [index, item] : list) item_of[index] = &item;
  }
  ExpandNeeds(items, item_of, stages);
  return stages;
}

// Says what is wrong with a text that is not YAML in yaml-cpp's words, which the docs show and
// users know (libyaml's when yaml-cpp reads the text after all). Only broken files pay for the
// second parse.
void AddSyntaxError(const YamlTree& tree, std::string_view text, Diagnostics& diag) {
  try {
    YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    SourcePos pos;
    if (!e.mark.is_null()) pos = SourcePos{e.mark.line + 1, e.mark.column + 1};
    diag.Add(pos, StrCat("invalid YAML: ", e.msg));
    return;
  } catch (const YAML::Exception& e) {
    diag.Add(SourcePos{}, StrCat("invalid YAML: ", e.what()));
    return;
  }
  diag.Add(SourcePos{tree.error_line() + 1, tree.error_column() + 1},
           StrCat("invalid YAML: ", tree.error_message()));
}

// Reorders `items` so that new position k holds what was at order[k], moving each item at
// most once: an already-sorted file (independent stages, a chain in file order) moves none.
// REQUIRES: order is a permutation of 0..items.size()-1.
void PermuteInPlace(const std::vector<int>& order, std::vector<StageSpec>& items) {
  std::vector<bool> done(items.size(), false);
  for (size_t start = 0; start < items.size(); ++start) {
    if (done[start] || order[start] == static_cast<int>(start)) continue;
    StageSpec held = std::move(items[start]);
    size_t k = start;
    while (static_cast<size_t>(order[k]) != start) {
      items[k] = std::move(items[order[k]]);
      done[k] = true;
      k = order[k];
    }
    items[k] = std::move(held);
    done[k] = true;
  }
}

}  // namespace

std::string FormatNodeSelector(const NodeSelector& selector) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : selector) parts.push_back(StrCat(k, ": ", v));
  return StrCat("{", StrJoin(parts, ", "), "}");
}

const StageSpec* Workflow::FindStage(std::string_view name) const {
  for (const StageSpec& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ParamSpec* Workflow::FindParam(std::string_view name) const {
  for (const ParamSpec& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Result<Workflow> ParseWorkflow(std::string_view text, std::string_view path) {
  if (text.size() > kMaxWorkflowBytes) {
    return absl::InvalidArgumentError(StrCat(path, ": the file is ", text.size(),
                                             " bytes, over the limit of ", kMaxWorkflowBytes,
                                             " bytes (", kMaxWorkflowBytes >> 20,
                                             " MiB) for a workflow file"));
  }
  Diagnostics diag{std::string(path)};
  auto tree = std::make_unique<YamlTree>(text);
  if (!tree->ok()) {
    AddSyntaxError(*tree, text, diag);
    return diag.ToStatus();
  }
  YamlNode root = tree->root();
  if (!root.IsMap()) {
    diag.Add(PosOf(root), root.IsNull() ? "the file is empty: expected a workflow (name, stages)"
                                        : StrCat("expected a mapping with name and stages at the"
                                                 " top level, got ",
                                                 Describe(root)));
    return diag.ToStatus();
  }

  Workflow wf;
  wf.path = std::string(path);
  OverridableFields defaults;
  std::vector<ParsedStage> stages;
  bool has_name = false, has_stages = false;
  for (const MapEntry& e : ReadMap(root, "the top level", "key", &kTopKeys, diag)) {
    if (e.key == "name") {
      has_name = true;
      std::optional<Scalar> name = ReadScalar(e, "name", diag);
      if (!name) continue;
      if (!IsWorkflowName(name->text)) {
        diag.Add(e.value_pos, StrCat("name: '", name->text,
                                     "' is not a workflow name (lower-case letters, digits, "
                                     "_ . and - only)"));
      }
      wf.name = name->text;
    } else if (e.key == "description") {
      if (auto d = ReadScalar(e, "description", diag)) wf.description = d->text;
    } else if (e.key == "params") {
      ReadParams(e, wf, diag);
    } else if (e.key == "defaults") {
      defaults = ParseDefaults(e, diag);
    } else if (e.key == "notify") {
      ReadNotify(e, &wf.notify, diag);
    } else if (e.key == "retention") {
      ReadRetention(e, &wf.retention, diag);
    } else if (e.key == "priority") {
      ReadPriority(e, &wf.priority, diag);
    } else if (e.key == "budget") {
      ReadBudget(e, &wf.budget, diag);
    } else if (e.key == "stages") {
      has_stages = true;
      if (e.value.IsMap() && e.value.size() > kMaxStages) {
        diag.Add(e.value_pos, StrCat(e.value.size(), " stages, over the limit of ",
                                        kMaxStages, " stages in one workflow"));
        return diag.ToStatus();
      }
      stages = ReadStages(e, wf.stages, diag);
    }
  }
  if (!has_name) diag.Add(PosOf(root), "missing required key 'name'");
  if (!has_stages) diag.Add(PosOf(root), "missing required key 'stages'");
  tree.reset();  // everything is read: the nodes go before the stages are checked

  std::vector<std::vector<TemplateSite>> sites;
  sites.reserve(stages.size());
  for (ParsedStage& stage : stages) sites.push_back(ApplyDefaults(defaults, stage));
  std::vector<std::string> param_names;
  for (const ParamSpec& p : wf.params) param_names.push_back(p.name);
  NeedsGraph graph = ValidateStages(stages, sites, param_names, diag, &wf.tag_uses);
  RETURN_IF_ERROR(diag.ToStatus());
  sites.clear();
  sites.shrink_to_fit();

  stages.clear();
  PermuteInPlace(TopologicalOrder(graph), wf.stages);
  return wf;
}

Result<std::map<std::string, std::string>> ResolveParams(
    const Workflow& wf, const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> values;
  for (const ParamSpec& p : wf.params) values[p.name] = p.default_value;
  std::vector<std::string> unknown;
  for (const auto& [name, value] : overrides) {
    auto it = values.find(name);
    if (it == values.end()) {
      unknown.push_back(StrCat("'", name, "'"));
      continue;
    }
    it->second = value;
  }
  if (!unknown.empty()) {
    std::vector<std::string> known;
    for (const ParamSpec& p : wf.params) known.push_back(p.name);
    std::string what = unknown.size() == 1 ? "unknown param " : "unknown params ";
    return absl::InvalidArgumentError(
        StrCat(what, StrJoin(unknown, ", "), " for workflow '", wf.name, "' (",
               known.empty() ? std::string("it has no params")
                             : StrCat("its params are: ", StrJoin(known, ", ")),
               ")"));
  }
  return values;
}

}  // namespace longhaul::workflow

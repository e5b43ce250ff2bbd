// Refusing at submission a stage that can never fit: more than any registered agent offers,
// or more than it and the services it needs can get together (docs/architecture.md,
// "Services and their consumers").
#include <algorithm>

#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {
namespace {

struct FitMember {
  const workflow::StageSpec* spec;
  double cpus;
  int64_t memory;
  int gpus;
};

struct FitAgent {
  std::string id;
  std::map<std::string, std::string> labels;
  double cpus;
  int64_t memory;
  int gpus;
};

bool FitLabelsMatch(const FitAgent& a, const workflow::NodeSelector& selector) {
  for (const auto& [key, value] : selector) {
    auto it = a.labels.find(key);
    if (it == a.labels.end() || it->second != value) return false;
  }
  return true;
}

// Whether members [i, end) can be placed on `agents` (their capacity left); a bounded search:
// past `budget` steps it answers yes (a refusal must be certain).
bool PlaceFrom(const std::vector<FitMember>& members, size_t i, std::vector<FitAgent>& agents,
               int& budget) {
  if (i == members.size() || --budget < 0) return true;
  const FitMember& m = members[i];
  for (FitAgent& a : agents) {
    if (!FitLabelsMatch(a, m.spec->node_selector)) continue;
    if (a.cpus + 1e-9 < m.cpus || a.memory < m.memory || a.gpus < m.gpus) continue;
    a.cpus -= m.cpus;
    a.memory -= m.memory;
    a.gpus -= m.gpus;
    bool ok = PlaceFrom(members, i + 1, agents, budget);
    a.cpus += m.cpus;
    a.memory += m.memory;
    a.gpus += m.gpus;
    if (ok) return true;
  }
  return false;
}

std::string MemberText(const FitMember& m) {
  std::string out = StrCat("'", m.spec->name, "' (", m.cpus, " cpus");
  if (m.memory > 0) out += StrCat(", ", m.memory >> 20, " MiB");
  if (m.gpus > 0) out += StrCat(", ", m.gpus, " GPUs");
  return out + ")";
}

}  // namespace

Status Scheduler::CheckStagesFit(const workflow::Workflow& wf, const RunPlan& plan) const {
  // With no agent registered yet, the first may be any size: nothing is refused.
  std::vector<FitAgent> agents;
  for (const auto& [id, a] : agents_) {
    const v1::Resources& r = a->row.resources;
    agents.push_back({id, a->row.labels, r.cpus(), r.memory_bytes(), r.gpus()});
  }
  if (agents.empty()) return OkStatus();
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < wf.stages.size(); ++i) index[wf.stages[i].name] = i;
  auto runs = [&](size_t i) { return i >= plan.stages.size() || plan.stages[i].action == "run"; };
  auto member = [](const workflow::StageSpec& spec) {
    return FitMember{&spec, spec.resources.cpus, spec.resources.memory_bytes, spec.resources.gpus};
  };
  for (size_t i = 0; i < wf.stages.size(); ++i) {
    const workflow::StageSpec& spec = wf.stages[i];
    if (!runs(i)) continue;
    // A selector no registered agent matches waits for one that does (as at run time).
    bool matched = false;
    for (const FitAgent& a : agents) matched = matched || FitLabelsMatch(a, spec.node_selector);
    if (!matched) continue;
    // The stage with every service it needs that runs: they must be up together.
    std::vector<FitMember> group{member(spec)};
    for (const std::string& need : spec.needs) {
      auto it = index.find(need);
      if (it == index.end()) continue;
      const workflow::StageSpec& dep = wf.stages[it->second];
      if (dep.kind == workflow::StageKind::kService && runs(it->second)) {
        group.push_back(member(dep));
      }
    }
    // The largest first: a failed search ends sooner.
    std::sort(group.begin() + 1, group.end(), [](const FitMember& a, const FitMember& b) {
      return std::tie(a.gpus, a.memory, a.cpus) > std::tie(b.gpus, b.memory, b.cpus);
    });
    int budget = 100'000;
    if (PlaceFrom(group, 0, agents, budget)) continue;
    std::vector<std::string> offered;
    for (const FitAgent& a : agents) {
      std::string text = StrCat(a.id, " ", a.cpus, " cpus");
      if (a.memory > 0) text += StrCat(", ", a.memory >> 20, " MiB");
      text += StrCat(", ", a.gpus, " GPUs");
      offered.push_back(std::move(text));
    }
    std::string what = StrCat("stage ", MemberText(group[0]));
    if (group.size() > 1) {
      std::vector<std::string> services;
      for (size_t k = 1; k < group.size(); ++k) services.push_back(MemberText(group[k]));
      what += StrCat(" with the services it needs, ", StrJoin(services, ", "),
                     ", which must run "
                     "beside it");
    }
    return absl::FailedPreconditionError(
        StrCat(what, ", can never fit on the registered agents (", StrJoin(offered, "; "),
               "); lower its resources, or register an agent with room for it and submit "
               "again"));
  }
  return OkStatus();
}

}  // namespace longhaul::scheduler

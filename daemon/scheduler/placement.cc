// Which agent a ready stage goes to: room, node_selector labels, nodes to avoid, locality;
// which agent a GPU stage without room waits for.
#include <map>
#include <set>

#include "core/logging.h"
#include "core/path_prefix.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {
namespace {

constexpr double kEps = 1e-9;

bool LabelsMatch(const AgentState& a, const workflow::NodeSelector& selector) {
  for (const auto& [key, value] : selector) {
    auto it = a.row.labels.find(key);
    if (it == a.row.labels.end() || it->second != value) return false;
  }
  return true;
}

bool Connected(const AgentState& a) { return a.session != 0 && a.reachable; }

// Whether `s` may go to `a`, room and file inputs aside: connected, labels matching, not
// avoided after a node_fail.
bool Eligible(const StageState* s, const AgentState& a) {
  return Connected(a) && LabelsMatch(a, s->spec->node_selector) &&
         (s->avoid == nullptr || s->avoid->agents.count(a.row.id) == 0);
}

std::string AgentList(const Avoidance& avoid, std::string_view sep) {
  return StrJoin(std::vector<std::string>(avoid.agents.begin(), avoid.agents.end()), sep);
}

bool SharedOn(const AgentState& a, std::string_view path) {
  for (const std::string& prefix : a.row.shared_paths) {
    if (UnderPrefix(path, prefix)) return true;
  }
  return false;
}

// Calls f(dep, path) for each file a stage reads from the stages it needs: each output of a
// finished or cached task that is an absolute path, where that task has an agent (the node it
// ran on, or for a cached one the node of its artifacts). A service's outputs are endpoints,
// reached over the network (--advertise-host), and bind nothing.
template <typename F>
void ForEachFileInput(const StageState* s, F f) {
  for (int d : s->deps) {
    const StageState* dep = s->run->stages[d].get();
    v1::StageStatus st = dep->row.status;
    if (st != v1::STAGE_SUCCEEDED && st != v1::STAGE_CACHED) continue;
    if (std::string_view(dep->row.agent_id).empty()) continue;
    for (const auto& [name, value] : dep->row.outputs) {
      if (!value.empty() && value[0] == '/') f(dep, value);
    }
  }
}

}  // namespace

bool Scheduler::Fits(const v1::Resources& free, const v1::Resources& req) {
  // GPUs are counted per agent: a stage asking N gets N of one agent, never a split.
  return free.cpus() + kEps >= req.cpus() && free.memory_bytes() >= req.memory_bytes() &&
         free.gpus() >= req.gpus();
}

std::string Scheduler::PlacementKey(const StageState* s) {
  // The agents its file inputs are on. Two stages whose inputs are on the same agents are one
  // shape even if only one of them may go elsewhere (its paths are shared): the key must stay
  // what it was while the stage is ready, and the agents' shared paths may change meanwhile.
  std::set<std::string_view> near;
  ForEachFileInput(s, [&](const StageState* dep, const std::string&) {
    near.insert(std::string_view(dep->row.agent_id));
  });
  const workflow::NodeSelector& selector = s->spec->node_selector;
  // Services are a shape of their own: Dispatch offers them in a pass after the tasks.
  bool service = IsService(s);
  if (selector.empty() && s->avoid == nullptr && near.empty() && !service) return "";
  std::string key = workflow::FormatNodeSelector(selector);
  if (service) key += " service";
  if (s->avoid != nullptr) key += StrCat(" not ", AgentList(*s->avoid, ","));
  if (!near.empty()) {
    key += StrCat(" near ", StrJoin(std::vector<std::string>(near.begin(), near.end()), ","));
  }
  return key;
}

bool Scheduler::MayGoTo(const StageState* s, const AgentState& a) const {
  return Eligible(s, a) && CanReadInputs(s, a);
}

bool Scheduler::CanReadInputs(const StageState* s, const AgentState& a) const {
  bool ok = true;
  ForEachFileInput(s, [&](const StageState* dep, const std::string& path) {
    if (!ok) return;
    std::string_view producer_id = dep->row.agent_id;
    if (producer_id == a.row.id) return;
    const AgentState* producer = agents_.Find(producer_id);
    if (producer != nullptr && SharedOn(*producer, path) && SharedOn(a, path)) return;
    ok = false;
  });
  return ok;
}

AgentState* Scheduler::PickAgent(const StageState* s) {
  const v1::Resources& req = s->row.resources;
  auto usable = [&](const AgentState* a) {
    return Fits(a->free, req) && MayGoTo(s, *a) && !DrainKeepsOff(s, *a) &&
           !ReservationKeepsOff(s, *a);
  };
  // A resumable stage goes back to the node that holds its output dir when it can.
  if (s->spec->resume && s->extras && !s->extras->previous_agent.empty()) {
    AgentState* previous = agents_.Find(s->extras->previous_agent);
    if (previous != nullptr && usable(previous)) return previous;
  }
  // Locality: how many of its upstream stages ran last on each agent (their outputs are there).
  std::map<std::string_view, int> upstream_on;
  for (int d : s->deps) {
    std::string_view id = s->run->stages[d]->row.agent_id;
    if (!id.empty()) ++upstream_on[id];
  }
  auto local = [&](const AgentState* a) {
    auto it = upstream_on.find(a->row.id);
    return it == upstream_on.end() ? 0 : it->second;
  };
  AgentState* best = nullptr;
  int best_local = 0;
  for (auto& [id, a] : agents_) {
    if (!usable(a.get())) continue;
    int l = local(a.get());
    if (best == nullptr || l > best_local ||
        (l == best_local && a->free.cpus() > best->free.cpus() + kEps)) {
      best = a.get();
      best_local = l;
    }
  }
  return best;
}

AgentState* Scheduler::GangAgent(const StageState* s) {
  const v1::Resources& req = s->row.resources;
  AgentState* best = nullptr;
  for (auto& [id, a] : agents_) {
    if (!Fits(a->row.resources, req) || !MayGoTo(s, *a) || DrainKeepsOff(s, *a) ||
        ReservationKeepsOffEver(s, *a)) {
      continue;
    }
    if (best == nullptr || a->free.gpus() > best->free.gpus()) best = a.get();
  }
  return best;
}

std::string Scheduler::ReadyReason(const StageState* s) const {
  std::string reason = ReadyReasonAlone(s);
  if (s->extras == nullptr || s->extras->preempted_by.empty()) return reason;
  return StrCat(s->extras->preempted_by, "; ", reason);
}

std::string Scheduler::ReadyReasonAlone(const StageState* s) const {
  bool any_connected = false;
  for (const auto& [id, a] : agents_) any_connected = any_connected || Connected(*a);
  if (!any_connected) {
    // Not a question of room: nothing could run it now, whatever it needs.
    return StrCat("no agent is connected (", WaitingReason(s->row.resources), ")");
  }
  const workflow::NodeSelector& selector = s->spec->node_selector;
  if (!selector.empty()) {
    bool any = false;
    for (const auto& [id, a] : agents_) {
      if (Connected(*a) && LabelsMatch(*a, selector)) any = true;
    }
    if (!any) {
      return StrCat("no agent matches node_selector ", workflow::FormatNodeSelector(selector));
    }
  }
  std::string reason = WaitingReason(s->row.resources) + ReservationReason(s);
  if (std::string where = LocalityReason(s); !where.empty()) {
    if (where[0] != ' ') return where;  // no agent could ever read its inputs
    reason += where;
  }
  if (s->avoid != nullptr && !s->avoid->agents.empty()) {
    reason += StrCat(" (not on ", AgentList(*s->avoid, ", "), ": its node failed)");
  }
  return reason;
}

std::string Scheduler::LocalityReason(const StageState* s) const {
  bool bound = false;
  ForEachFileInput(s, [&](const StageState*, const std::string&) { bound = true; });
  if (!bound) return "";
  std::vector<std::string> can;  // the agents it may go to, inputs aside, that can read them
  size_t candidates = 0;
  for (const auto& [id, a] : agents_) {
    if (!Eligible(s, *a)) continue;
    ++candidates;
    if (CanReadInputs(s, *a)) can.push_back(id);
  }
  if (!can.empty()) {
    if (can.size() == candidates) return "";
    return StrCat(" on ", StrJoin(can, " or "), " (where the outputs it needs are)");
  }
  // No agent it may go to can read them: name the agents that hold them.
  std::map<std::string, std::string> held_on;  // agent -> "stage (path)"
  ForEachFileInput(s, [&](const StageState* dep, const std::string& path) {
    const AgentState* producer = agents_.Find(std::string_view(dep->row.agent_id));
    if (producer != nullptr && SharedOn(*producer, path)) return;
    held_on.emplace(std::string(std::string_view(dep->row.agent_id)),
                    StrCat(dep->row.name, " (", path, ")"));
  });
  if (held_on.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& [agent, what] : held_on) parts.push_back(StrCat(what, " on ", agent));
    return StrCat("the outputs it needs are on different agents and not under a path they ",
                  "share (--shared-path): ", StrJoin(parts, ", "));
  }
  if (held_on.empty()) {
    return "the outputs it needs are under shared paths that no agent it may go to declares";
  }
  const auto& [agent, what] = *held_on.begin();
  const AgentState* holder = agents_.Find(agent);
  std::string why;
  if (holder == nullptr || !Connected(*holder)) {
    why = "which is not connected";
  } else if (!LabelsMatch(*holder, s->spec->node_selector)) {
    why = StrCat("which does not match its node_selector ",
                 workflow::FormatNodeSelector(s->spec->node_selector));
  } else if (s->avoid != nullptr && s->avoid->agents.count(agent) != 0) {
    why = "which it avoids after a node_fail";
  } else {
    why = "which cannot read its other inputs (not under a path both agents declare)";
  }
  return StrCat("waiting for agent ", agent, ", which holds the outputs of ", what,
                " (not under a --shared-path), ", why);
}

void Scheduler::AvoidFailedNode(StageState* s, const AgentState& agent, const std::string& node) {
  if (s->avoid == nullptr) s->avoid = std::make_unique<Avoidance>();
  if (agent.row.executor == "slurm") {
    // One agent is a whole cluster: leave out the node, not the agent.
    if (node.empty()) return;
    std::vector<std::string>& nodes = s->avoid->nodes;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    GetLogger("scheduler")
        ->info("run {} stage {}: later attempts exclude node {}", s->run->row.id, s->row.name,
               node);
    return;
  }
  s->avoid->agents.insert(agent.row.id);
  GetLogger("scheduler")
      ->info("run {} stage {}: later attempts avoid agent {}", s->run->row.id, s->row.name,
             agent.row.id);
}

}  // namespace longhaul::scheduler

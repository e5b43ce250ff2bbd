// Which agent a ready stage goes to: room, node_selector labels, nodes to avoid, locality;
// which agent a GPU stage without room waits for.
#include "core/logging.h"
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

std::string AgentList(const Avoidance& avoid, std::string_view sep) {
  return StrJoin(std::vector<std::string>(avoid.agents.begin(), avoid.agents.end()), sep);
}

}  // namespace

bool Scheduler::Fits(const v1::Resources& free, const v1::Resources& req) {
  // GPUs are counted per agent: a stage asking N gets N of one agent, never a split.
  return free.cpus() + kEps >= req.cpus() && free.memory_bytes() >= req.memory_bytes() &&
         free.gpus() >= req.gpus();
}

std::string Scheduler::PlacementKey(const StageState* s) {
  const workflow::NodeSelector& selector = s->spec->node_selector;
  if (selector.empty() && s->avoid == nullptr) return "";
  std::string key = workflow::FormatNodeSelector(selector);
  if (s->avoid != nullptr) key += StrCat(" not ", AgentList(*s->avoid, ","));
  return key;
}

AgentState* Scheduler::PickAgent(const StageState* s) {
  const v1::Resources& req = s->row.resources;
  const workflow::NodeSelector& selector = s->spec->node_selector;
  auto usable = [&](const AgentState* a) {
    return Connected(*a) && Fits(a->free, req) && LabelsMatch(*a, selector) &&
           (s->avoid == nullptr || s->avoid->agents.count(a->row.id) == 0);
  };
  // A resumable stage goes back to the node that holds its output dir when it can.
  if (s->spec->resume && s->extras && !s->extras->previous_agent.empty()) {
    auto it = agents_.find(s->extras->previous_agent);
    if (it != agents_.end() && usable(it->second.get())) return it->second.get();
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
    if (!Connected(*a) || !Fits(a->row.resources, req) ||
        !LabelsMatch(*a, s->spec->node_selector) ||
        (s->avoid != nullptr && s->avoid->agents.count(a->row.id) != 0)) {
      continue;
    }
    if (best == nullptr || a->free.gpus() > best->free.gpus()) best = a.get();
  }
  return best;
}

std::string Scheduler::ReadyReason(const StageState* s) const {
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
  std::string reason = WaitingReason(s->row.resources);
  if (s->avoid != nullptr && !s->avoid->agents.empty()) {
    reason += StrCat(" (not on ", AgentList(*s->avoid, ", "), ": its node failed)");
  }
  return reason;
}

void Scheduler::AvoidFailedNode(StageState* s, const AgentState& agent, const std::string& node) {
  if (s->avoid == nullptr) s->avoid = std::make_unique<Avoidance>();
  if (agent.row.executor == "slurm") {
    // One agent is a whole cluster: leave out the node, not the agent.
    if (node.empty()) return;
    std::vector<std::string>& nodes = s->avoid->nodes;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    GetLogger("scheduler")->info("run {} stage {}: later attempts exclude node {}",
                                 s->run->row.id, s->row.name, node);
    return;
  }
  s->avoid->agents.insert(agent.row.id);
  GetLogger("scheduler")->info("run {} stage {}: later attempts avoid agent {}", s->run->row.id,
                               s->row.name, agent.row.id);
}

}  // namespace longhaul::scheduler

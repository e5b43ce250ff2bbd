#include "daemon/scheduler/agent_registry.h"

#include <utility>

namespace longhaul::scheduler {

AgentRegistry::AgentRegistry(int64_t* next_request_id)
    : logs_(next_request_id), checks_(next_request_id), removals_(next_request_id) {}

AgentState* AgentRegistry::Find(std::string_view id) const {
  auto it = agents_.find(id);
  return it == agents_.end() ? nullptr : it->second.get();
}

AgentState* AgentRegistry::Add(std::unique_ptr<AgentState> agent) {
  std::unique_ptr<AgentState>& slot = agents_[agent->row.id];
  slot = std::move(agent);
  return slot.get();
}

AgentState* AgentRegistry::FindOrAdd(const std::string& id, int64_t now) {
  std::unique_ptr<AgentState>& slot = agents_[id];
  if (!slot) {
    slot = std::make_unique<AgentState>();
    slot->row.id = id;
    slot->row.first_seen_ms = now;
  }
  return slot.get();
}

AgentState* AgentRegistry::BySession(uint64_t session) const {
  auto it = sessions_.find(session);
  return it == sessions_.end() ? nullptr : Find(it->second);
}

uint64_t AgentRegistry::Attach(AgentState* agent, uint64_t session) {
  uint64_t replaced = 0;
  if (agent->session != 0 && agent->session != session) {
    replaced = agent->session;
    sessions_.erase(replaced);
  }
  agent->session = session;
  sessions_[session] = agent->row.id;
  return replaced;
}

AgentState* AgentRegistry::Detach(uint64_t session) {
  AgentState* agent = BySession(session);
  sessions_.erase(session);
  if (agent == nullptr || agent->session != session) return nullptr;
  agent->session = 0;
  return agent;
}

std::vector<uint64_t> AgentRegistry::Sessions() const {
  std::vector<uint64_t> out;
  out.reserve(sessions_.size());
  for (const auto& [session, agent_id] : sessions_) out.push_back(session);
  return out;
}

void AgentRegistry::FailRequests(std::string_view agent_id, const Status& status) {
  logs_.FailAgent(agent_id, status);
  checks_.FailAgent(agent_id, status);
  removals_.FailAgent(agent_id, status);
}

void AgentRegistry::FailAllRequests(const Status& status) {
  logs_.FailAll(status);
  checks_.FailAll(status);
  removals_.FailAll(status);
}

}  // namespace longhaul::scheduler

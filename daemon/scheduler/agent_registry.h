// The agents the scheduler knows (AgentState, by id), which of them has a live session (the
// rpc layer's stream id), and the requests that callers wait on agents to answer (a piece of a
// log, an artifact check, a removal).
//
// It is bookkeeping only: it never talks to an agent and decides nothing about one. The
// scheduler decides (placement, reconciliation, silence and loss) and tells it what changed;
// the link it closes sessions on stays the scheduler's.
//
// An agent once known stays known (a row in the store): disconnecting ends its session, not its
// entry. The whole registry is replaced when the scheduler reloads its state (Recover), after it
// has closed every session and failed every request (FailAllRequests).
//
// Thread-safety: none; the scheduler's loop thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "daemon/scheduler/agent_requests.h"
#include "daemon/scheduler/model.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::scheduler {

class AgentRegistry {
 public:
  using Agents = std::map<std::string, std::unique_ptr<AgentState>, std::less<>>;

  // `next_request_id`: the scheduler's counter of request ids (not owned; must outlive this),
  // shared with the other requests it sends, and kept across reloads (see AgentRequests).
  explicit AgentRegistry(int64_t* next_request_id);
  AgentRegistry(AgentRegistry&&) = default;
  AgentRegistry& operator=(AgentRegistry&&) = default;

  // Every known agent, by id in id order: `for (const auto& [id, agent] : registry)`. The
  // agents themselves may be changed; who is known changes only through Add and FindOrAdd.
  Agents::const_iterator begin() const { return agents_.begin(); }
  Agents::const_iterator end() const { return agents_.end(); }
  size_t size() const { return agents_.size(); }

  // The agent `id`; null when none is known by that id.
  AgentState* Find(std::string_view id) const;
  // Takes in an agent loaded from the store (by its row's id; replaces one known by that id).
  AgentState* Add(std::unique_ptr<AgentState> agent);
  // The agent `id`, made when none is known: only its id and first_seen_ms (`now`) are set.
  AgentState* FindOrAdd(const std::string& id, int64_t now);

  // --- sessions ---
  // The agent whose current session `session` is; null when none (an unknown session, one
  // that ended, or one that a newer session of its agent replaced).
  AgentState* BySession(uint64_t session) const;
  // `agent` talks on `session` from now on. Returns the session it had before when that is
  // another one (0: none), which the caller closes: it leads to no agent any more.
  uint64_t Attach(AgentState* agent, uint64_t session);
  // Session `session` ended. Returns its agent when it was that agent's current session (now
  // 0: no live stream); null when it led to no agent or a newer one had replaced it.
  AgentState* Detach(uint64_t session);
  // Every session that leads to an agent (what a reload closes).
  std::vector<uint64_t> Sessions() const;

  // --- requests waiting on agents (AgentRequests) ---
  AgentRequests<v1::LogData>& logs() { return logs_; }
  AgentRequests<std::vector<std::string>>& checks() { return checks_; }
  AgentRequests<v1::AttemptsRemoved>& removals() { return removals_; }
  // Answers every request waiting on `agent_id` with `status`: logs, then checks, then
  // removals, each oldest first.
  void FailRequests(std::string_view agent_id, const Status& status);
  // The same for every request of every agent.
  void FailAllRequests(const Status& status);

 private:
  Agents agents_;
  std::unordered_map<uint64_t, std::string> sessions_;  // session -> agent id
  AgentRequests<v1::LogData> logs_;
  AgentRequests<std::vector<std::string>> checks_;
  AgentRequests<v1::AttemptsRemoved> removals_;
};

}  // namespace longhaul::scheduler

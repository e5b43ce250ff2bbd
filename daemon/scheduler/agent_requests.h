// Requests the scheduler sent to an agent and whose answer a caller waits for (a piece of a log,
// an artifact check, a removal): each is its caller's callback, kept under the request's id
// with the agent that must answer.
//
// Every request ends exactly once: with the agent's answer (Take), or with an error when the
// agent disconnects (FailAgent) or the coordinator reloads its state (FailAll). Nothing is
// dropped silently, since each caller blocks on its answer.
//
// Ids come from a counter the scheduler owns and shares between every kind of request it sends
// (these and CheckGpu), so no two requests in flight share an id, and an answer can only be
// matched to the request that asked it, also after a reload (the counter is never reset).
//
// Thread-safety: none; the scheduler's loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace longhaul::scheduler {

template <typename Reply>
class AgentRequests {
 public:
  using Done = std::function<void(Result<Reply>)>;

  // `next_id`: the shared counter (not owned; must outlive this); each Add takes one id of it.
  explicit AgentRequests(int64_t* next_id) : next_id_(next_id) {}
  AgentRequests(const AgentRequests&) = delete;
  AgentRequests& operator=(const AgentRequests&) = delete;
  // Moves keep the counter; the requests move along (an owner replaced whole fails its own
  // first: FailAll).
  AgentRequests(AgentRequests&&) = default;
  AgentRequests& operator=(AgentRequests&&) = default;

  // Keeps `done` for the answer from `agent_id`; returns the id to send with the request.
  int64_t Add(std::string agent_id, Done done) {
    int64_t id = (*next_id_)++;
    pending_.emplace(id, Pending{std::move(done), std::move(agent_id)});
    return id;
  }

  // The callback of request `id`, removed: the caller hands it the answer. Empty when no such
  // request waits (already failed, or an answer sent twice).
  std::optional<Done> Take(int64_t id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return std::nullopt;
    Done done = std::move(it->second.done);
    pending_.erase(it);
    return done;
  }

  // Answers every request that waits on `agent_id` with `status`, oldest first. The requests
  // are removed before any callback runs, so a callback may add new ones.
  void FailAgent(std::string_view agent_id, const Status& status) {
    std::vector<Done> failed;
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.agent_id == agent_id) {
        failed.push_back(std::move(it->second.done));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    for (Done& done : failed) done(status);
  }

  // Answers every request with `status`, oldest first (as FailAgent, for every agent).
  void FailAll(const Status& status) {
    std::map<int64_t, Pending> failed;
    failed.swap(pending_);
    for (auto& [id, p] : failed) p.done(status);
  }

  size_t size() const { return pending_.size(); }

 private:
  struct Pending {
    Done done;
    std::string agent_id;
  };
  int64_t* next_id_;
  std::map<int64_t, Pending> pending_;
};

}  // namespace longhaul::scheduler

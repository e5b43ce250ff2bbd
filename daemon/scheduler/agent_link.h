// How the scheduler talks to connected agents. The rpc layer implements it over each agent's
// gRPC stream; tests use a fake that records what was sent.
#pragma once

#include <cstdint>

#include "longhaul/v1/agent.pb.h"

namespace longhaul::scheduler {

class AgentLink {
 public:
  virtual ~AgentLink() = default;
  // Queues `msg` on the session's stream. Never blocks; a closed session drops it (the
  // scheduler re-sends what matters after the agent reconnects). Called on the loop thread,
  // only after the transaction that decided the message has committed.
  virtual void Send(uint64_t session_id, const v1::CoordinatorMessage& msg) = 0;
  // Ends a session (a newer connection of the same agent replaced it).
  virtual void Close(uint64_t session_id) = 0;
};

}  // namespace longhaul::scheduler

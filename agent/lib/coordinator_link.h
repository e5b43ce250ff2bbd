// The agent's side of the stream to the coordinator, as the agent's logic sees it.
//
// Every stream the link opens gets a new generation number (1, 2, ...). The agent sends with
// the generation it was told about; a message for a stream that has ended is dropped, which
// is safe because the agent re-sends everything unacknowledged on the next stream.
#pragma once

#include <cstdint>

#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

class CoordinatorLink {
 public:
  virtual ~CoordinatorLink() = default;
  // Thread-safe; never blocks on the network.
  virtual void Send(uint64_t generation, v1::AgentMessage msg) = 0;
};

}  // namespace longhaul::agent

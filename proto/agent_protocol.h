// The version of the agent<->coordinator protocol (agent.proto), carried in Hello and Welcome.
//
// The number changes only when a change is not additive: a message or field whose meaning an
// older peer would get wrong. Added fields (which an older peer ignores) keep it. A
// coordinator accepts agents of versions kOldestAgentProtocolVersion..kAgentProtocolVersion;
// version 0 is an agent older than the field, which speaks version 1. docs/agent.md has the
// rule and docs/operations.md the upgrade order it implies.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace longhaul {

inline constexpr int kAgentProtocolVersion = 1;
inline constexpr int kOldestAgentProtocolVersion = 1;

// The version `v` stands for: 0 (the field absent) is 1.
inline int EffectiveProtocolVersion(int v) { return v == 0 ? 1 : v; }

// OK when a coordinator of this build can hold a session with agent `agent_id`, whose Hello
// said `agent_version`; otherwise FailedPrecondition naming both versions and what to upgrade.
absl::Status CheckAgentProtocol(int agent_version, const std::string& agent_id);

}  // namespace longhaul

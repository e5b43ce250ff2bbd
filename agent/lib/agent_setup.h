// Start-up helpers for longhaul-agent's main(): identity, the state dir lock, flag values.
#pragma once

#include <string>
#include <utility>

#include "core/config/config_checks.h"  // CheckHostPort, for the agent's callers
#include "core/status.h"

namespace longhaul::agent {

// The agent's id: STATE/agent_id if it exists, else `flag_id`, else the host name; written
// to STATE/agent_id on first use. A `flag_id` that differs from a stored id is an error: the
// attempts in the state dir belong to the stored identity.
Result<std::string> ResolveAgentId(const std::string& state_dir, const std::string& flag_id);

// Takes an exclusive lock on STATE/agent.lock, held until the process exits (the returned
// descriptor stays open). FailedPrecondition when another agent holds it.
Result<int> LockStateDir(const std::string& state_dir);

// "k=v" -> {k, v}; InvalidArgument names the bad label.
Result<std::pair<std::string, std::string>> ParseLabel(const std::string& text);

// The directory of the running executable (/proc/self/exe), "" if unknown.
std::string SelfBinDir();

std::string Hostname();

}  // namespace longhaul::agent

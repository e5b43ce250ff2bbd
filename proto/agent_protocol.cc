#include "proto/agent_protocol.h"

#include "absl/strings/str_cat.h"

namespace longhaul {

absl::Status CheckAgentProtocol(int agent_version, const std::string& agent_id) {
  int v = EffectiveProtocolVersion(agent_version);
  if (v > kAgentProtocolVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("agent '", agent_id, "' speaks agent protocol version ", v,
                     " but this longhauld speaks version ", kAgentProtocolVersion,
                     "; upgrade longhauld before its agents (docs/operations.md, Upgrading)"));
  }
  if (v < kOldestAgentProtocolVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("agent '", agent_id, "' speaks agent protocol version ", v,
                     " but this longhauld needs version ", kOldestAgentProtocolVersion, " to ",
                     kAgentProtocolVersion, "; upgrade the agent"));
  }
  return absl::OkStatus();
}

}  // namespace longhaul

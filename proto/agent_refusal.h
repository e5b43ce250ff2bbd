// What a coordinator's refusal of a duplicate agent id carries besides its message. The
// refusal itself is the gRPC status ALREADY_EXISTS on AgentService.Connect ("agent id 'X' is
// already connected from HOST:PORT (since ...)"); docs/agent.md "One agent per id" has the rule.
#pragma once

namespace longhaul {

// Trailing metadata of the refusal: how long (decimal milliseconds) the other session may stay
// silent before the coordinator takes it as gone and lets a new connection replace it. A
// refused agent that is still refused after that long knows the other one is alive.
inline constexpr char kReplaceAfterMetadata[] = "longhaul-replace-after-ms";

}  // namespace longhaul

// Lower-case names of the proto state enums, as the CLI, the store and the docs spell them
// ("running", "succeeded", ...), and back.
#pragma once

#include <optional>
#include <string_view>

#include "longhaul/v1/types.pb.h"

namespace longhaul {

std::string_view RunStatusName(v1::RunStatus s);
std::string_view StageStatusName(v1::StageStatus s);
std::string_view AttemptStateName(v1::AttemptState s);
std::string_view AgentStateName(v1::AgentState s);
// The stage status as people read it in tables and reasons: the name with "_" as a space
// ("stopped early"); the name itself where it is one word.
std::string_view StageStatusLabel(v1::StageStatus s);

std::optional<v1::RunStatus> ParseRunStatus(std::string_view name);
std::optional<v1::StageStatus> ParseStageStatus(std::string_view name);
std::optional<v1::AttemptState> ParseAttemptState(std::string_view name);

bool IsTerminal(v1::RunStatus s);
// succeeded, failed, cancelled, cached, skipped, stopped, stopped_early
bool IsTerminal(v1::StageStatus s);
// exited, killed, lost
bool IsTerminal(v1::AttemptState s);

}  // namespace longhaul

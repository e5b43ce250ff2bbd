#include "proto/state_names.h"

#include <array>
#include <utility>

namespace longhaul {
namespace {

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, name] : table) {
    if (v == e) return name;
  }
  return "unspecified";
}

template <typename E, size_t N>
std::optional<E> ValueOf(const std::array<std::pair<E, std::string_view>, N>& table,
                         std::string_view name) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<v1::RunStatus, std::string_view>, 5> kRun{{
    {v1::RUN_PENDING, "pending"},
    {v1::RUN_RUNNING, "running"},
    {v1::RUN_SUCCEEDED, "succeeded"},
    {v1::RUN_FAILED, "failed"},
    {v1::RUN_CANCELLED, "cancelled"},
}};

constexpr std::array<std::pair<v1::StageStatus, std::string_view>, 12> kStage{{
    {v1::STAGE_WAITING, "waiting"},
    {v1::STAGE_READY, "ready"},
    {v1::STAGE_RUNNING, "running"},
    {v1::STAGE_SUCCEEDED, "succeeded"},
    {v1::STAGE_FAILED, "failed"},
    {v1::STAGE_CANCELLED, "cancelled"},
    {v1::STAGE_CACHED, "cached"},
    {v1::STAGE_SKIPPED, "skipped"},
    {v1::STAGE_STARTING, "starting"},
    {v1::STAGE_SERVING, "serving"},
    {v1::STAGE_STOPPED, "stopped"},
    {v1::STAGE_STOPPED_EARLY, "stopped_early"},
}};

constexpr std::array<std::pair<v1::AttemptState, std::string_view>, 6> kAttempt{{
    {v1::ATTEMPT_STARTING, "starting"},
    {v1::ATTEMPT_RUNNING, "running"},
    {v1::ATTEMPT_EXITED, "exited"},
    {v1::ATTEMPT_KILLED, "killed"},
    {v1::ATTEMPT_UNKNOWN, "unknown"},
    {v1::ATTEMPT_LOST, "lost"},
}};

constexpr std::array<std::pair<v1::AgentState, std::string_view>, 4> kAgent{{
    {v1::AGENT_CONNECTED, "connected"},
    {v1::AGENT_UNREACHABLE, "unreachable"},
    {v1::AGENT_DISCONNECTED, "disconnected"},
    {v1::AGENT_LOST, "lost"},
}};

}  // namespace

std::string_view RunStatusName(v1::RunStatus s) { return NameOf(kRun, s); }
std::string_view StageStatusName(v1::StageStatus s) { return NameOf(kStage, s); }
std::string_view StageStatusLabel(v1::StageStatus s) {
  return s == v1::STAGE_STOPPED_EARLY ? "stopped early" : StageStatusName(s);
}
std::string_view AttemptStateName(v1::AttemptState s) { return NameOf(kAttempt, s); }
std::string_view AgentStateName(v1::AgentState s) { return NameOf(kAgent, s); }

std::optional<v1::RunStatus> ParseRunStatus(std::string_view n) { return ValueOf(kRun, n); }
std::optional<v1::StageStatus> ParseStageStatus(std::string_view n) { return ValueOf(kStage, n); }
std::optional<v1::AttemptState> ParseAttemptState(std::string_view n) {
  return ValueOf(kAttempt, n);
}

bool IsTerminal(v1::RunStatus s) {
  return s == v1::RUN_SUCCEEDED || s == v1::RUN_FAILED || s == v1::RUN_CANCELLED;
}

bool IsTerminal(v1::StageStatus s) {
  switch (s) {
    case v1::STAGE_SUCCEEDED:
    case v1::STAGE_FAILED:
    case v1::STAGE_CANCELLED:
    case v1::STAGE_CACHED:
    case v1::STAGE_SKIPPED:
    case v1::STAGE_STOPPED:
    case v1::STAGE_STOPPED_EARLY:
      return true;
    default:
      return false;
  }
}

bool IsTerminal(v1::AttemptState s) {
  return s == v1::ATTEMPT_EXITED || s == v1::ATTEMPT_KILLED || s == v1::ATTEMPT_LOST;
}

}  // namespace longhaul

// Maintenance windows: the drains and the fit rule (maintenance.h).
#include "daemon/scheduler/maintenance.h"

#include "absl/time/time.h"
#include "core/duration.h"
#include "core/strings.h"

namespace longhaul::scheduler {

std::optional<int64_t> AttemptBoundMs(const workflow::StageSpec& spec) {
  if (!spec.timeout_ms) return std::nullopt;
  return *spec.timeout_ms + spec.grace_ms;
}

bool FitsBeforeDrain(const store::AgentDrainRow& drain, std::optional<int64_t> bound_ms,
                     int64_t now_ms) {
  return bound_ms.has_value() && now_ms + *bound_ms <= drain.at_ms;
}

std::string FormatDrainTime(int64_t at_ms, int64_t now_ms) {
  absl::Time at = absl::FromUnixMillis(at_ms);
  absl::TimeZone utc = absl::UTCTimeZone();
  bool same_day = absl::FormatTime("%Y-%m-%d", at, utc) ==
                  absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(now_ms), utc);
  return absl::FormatTime(same_day ? "%H:%M UTC" : "%Y-%m-%d %H:%M UTC", at, utc);
}

namespace {

std::string DrainWhy(const store::AgentDrainRow& drain) {
  return drain.reason.empty() ? "" : StrCat(" (", drain.reason, ")");
}

}  // namespace

std::string DrainWaitReason(const store::AgentDrainRow& drain, const workflow::StageSpec& spec,
                            int64_t now_ms) {
  std::string when = FormatDrainTime(drain.at_ms, now_ms);
  if (drain.at_ms <= now_ms) {
    return StrCat("agent ", drain.agent_id, " is drained since ", when, DrainWhy(drain));
  }
  std::string head = StrCat("agent ", drain.agent_id, " drains at ", when, DrainWhy(drain), ": ");
  if (!spec.timeout_ms) return StrCat(head, "this stage has no timeout");
  return StrCat(head, "this stage's timeout ", FormatDurationMs(*spec.timeout_ms), " does not fit");
}

std::string DrainStopDetail(const store::AgentDrainRow& drain, int64_t now_ms) {
  return StrCat("agent ", drain.agent_id, " drained at ", FormatDrainTime(drain.at_ms, now_ms),
                DrainWhy(drain));
}

void Maintenance::Load(std::vector<store::AgentDrainRow> rows) {
  drains_.clear();
  for (store::AgentDrainRow& row : rows) Set(std::move(row));
}

uint64_t Maintenance::Set(store::AgentDrainRow row) {
  std::string id = row.agent_id;
  drains_[id] = std::move(row);
  return ++generations_[id];
}

bool Maintenance::Clear(const std::string& agent_id) {
  ++generations_[agent_id];
  return drains_.erase(agent_id) > 0;
}

const store::AgentDrainRow* Maintenance::Find(std::string_view agent_id) const {
  auto it = drains_.find(agent_id);
  return it == drains_.end() ? nullptr : &it->second;
}

uint64_t Maintenance::generation(std::string_view agent_id) const {
  auto it = generations_.find(agent_id);
  return it == generations_.end() ? 0 : it->second;
}

}  // namespace longhaul::scheduler

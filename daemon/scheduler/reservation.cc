// Reservations of agents' GPUs: the rules (reservation.h).
#include "daemon/scheduler/reservation.h"

#include <algorithm>
#include <set>

#include "core/strings.h"
#include "daemon/scheduler/maintenance.h"

namespace longhaul::scheduler {

bool HeldFor(const store::ReservationRow& r, std::string_view user, std::string_view team) {
  if (r.holder_kind == "user") return !user.empty() && user == r.holder;
  return !team.empty() && team == r.holder;
}

bool ReservationBinds(const store::ReservationRow& r, std::optional<int64_t> bound_ms,
                      int64_t now_ms) {
  if (r.until_ms <= now_ms) return false;
  if (r.from_ms <= now_ms) return true;
  // Before the window: as a drain at the window's start would decide.
  store::AgentDrainRow start;
  start.agent_id = r.agent_id;
  start.at_ms = r.from_ms;
  return !FitsBeforeDrain(start, bound_ms, now_ms);
}

std::string DescribeHolder(const store::ReservationRow& r) {
  return StrCat(r.holder_kind, " ", r.holder);
}

std::string ReservedPhrase(const store::ReservationRow& r, int agent_gpus, int64_t now_ms) {
  std::string window = r.from_ms <= now_ms ? StrCat("until ", FormatDrainTime(r.until_ms, now_ms))
                                           : StrCat("from ", FormatDrainTime(r.from_ms, now_ms),
                                                    " until ", FormatDrainTime(r.until_ms, now_ms));
  return StrCat(r.gpus, " of ", r.agent_id, "'s ", agent_gpus, " GPUs are reserved for ",
                DescribeHolder(r), " ", window, " (reservation ", r.id, ")");
}

std::string ReservationStopDetail(const store::ReservationRow& r, int64_t now_ms) {
  return StrCat(r.gpus, " of ", r.agent_id, "'s GPUs are reserved for ", DescribeHolder(r),
                " from ", FormatDrainTime(r.from_ms, now_ms), " (reservation ", r.id, ")");
}

Status ValidateReservation(const store::ReservationRow& r, int agent_gpus,
                           const std::vector<const store::ReservationRow*>& others,
                           int64_t now_ms) {
  if (r.until_ms <= now_ms) {
    return absl::InvalidArgumentError(
        StrCat("the window ended at ", FormatDrainTime(r.until_ms, now_ms), ", in the past"));
  }
  if (r.until_ms <= r.from_ms) {
    return absl::InvalidArgumentError(StrCat("--until ", FormatDrainTime(r.until_ms, now_ms),
                                             " is not after --from ",
                                             FormatDrainTime(r.from_ms, now_ms)));
  }
  if (r.gpus <= 0) return absl::InvalidArgumentError("--gpus: reserve 1 or more GPUs");
  if (r.gpus > agent_gpus) {
    return absl::InvalidArgumentError(
        StrCat("--gpus ", r.gpus, ": agent ", r.agent_id, " has ", agent_gpus, " GPUs"));
  }
  // The most GPUs reserved at once in the window: at its start or where another one starts.
  std::set<int64_t> moments = {r.from_ms};
  for (const store::ReservationRow* o : others) {
    if (o->from_ms > r.from_ms && o->from_ms < r.until_ms) moments.insert(o->from_ms);
  }
  for (int64_t t : moments) {
    int total = r.gpus;
    std::vector<std::string> with;
    for (const store::ReservationRow* o : others) {
      if (o->from_ms <= t && t < o->until_ms) {
        total += o->gpus;
        with.push_back(StrCat(o->id));
      }
    }
    if (total > agent_gpus) {
      return absl::InvalidArgumentError(
          StrCat("with reservation", with.size() == 1 ? " " : "s ", StrJoin(with, ", "), ", ",
                 total, " of agent ", r.agent_id, "'s ", agent_gpus, " GPUs would be reserved at ",
                 FormatDrainTime(t, now_ms)));
    }
  }
  return OkStatus();
}

void Reservations::Load(std::vector<store::ReservationRow> rows) {
  rows_.clear();
  for (store::ReservationRow& r : rows) Add(std::move(r));
}

void Reservations::Add(store::ReservationRow row) { rows_[row.id] = std::move(row); }

bool Reservations::Remove(int64_t id) { return rows_.erase(id) > 0; }

const store::ReservationRow* Reservations::Find(int64_t id) const {
  auto it = rows_.find(id);
  return it == rows_.end() ? nullptr : &it->second;
}

std::vector<const store::ReservationRow*> Reservations::OnAgent(std::string_view agent_id) const {
  std::vector<const store::ReservationRow*> out;
  for (const auto& [id, r] : rows_) {
    if (r.agent_id == agent_id) out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto* a, const auto* b) { return a->from_ms < b->from_ms; });
  return out;
}

int KeptGpus(const std::vector<const store::ReservationRow*>& on_agent, std::string_view user,
             std::string_view team, std::optional<int64_t> bound_ms, int64_t now_ms,
             const std::function<int(const store::ReservationRow&)>& holder_uses,
             const store::ReservationRow** first) {
  int kept = 0;
  for (const store::ReservationRow* r : on_agent) {
    if (HeldFor(*r, user, team) || !ReservationBinds(*r, bound_ms, now_ms)) continue;
    int keeps = r->gpus;
    if (r->from_ms <= now_ms) keeps = std::max(0, keeps - holder_uses(*r));
    if (keeps == 0) continue;
    if (first != nullptr && *first == nullptr) *first = r;
    kept += keeps;
  }
  return kept;
}

}  // namespace longhaul::scheduler

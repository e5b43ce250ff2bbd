// Reservations of agents' GPUs (docs/scheduling.md, "Reservations"): `longhaul reserve AGENT
// --gpus N --team T --from A --until B` holds N of the agent's GPUs for team T (or a user) from
// A until B. This file holds the reservations and their rules, apart from the scheduler so that
// they can be tested on their own; reservation_sched.cc applies them.
//
// The rules, for an attempt of a run whose user and team are not the holder's:
//   - During the window, the reservation keeps from it what of its N GPUs the holder's own
//     attempts on the agent do not use: it goes there only on the agent's other GPUs.
//   - Before the window, the same holds unless the attempt ends before the window starts: the
//     drains' fit rule (maintenance.h, timeout plus grace) decides, and a stage without a
//     timeout never fits. The GPUs in use now count as they are (a running attempt that ends
//     before the window is not foreseen).
//   - At the window's start, others' attempts on the agent are stopped until the reservation's
//     unused GPUs are free (reservation_sched.cc).
//   - After `until`, the reservation binds no one.
// The holder's runs use the reserved GPUs and any other room as usual.
//
// Thread-safety: none (the scheduler's loop thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "daemon/store/rows.h"

namespace longhaul::scheduler {

// The failure kind of an attempt stopped at a reservation's start (its stage goes back to the
// queue, no retry spent, as after a drain).
inline constexpr std::string_view kReservationStopKind = "reservation";

// Whether a run of `user` and `team` is the reservation's holder.
bool HeldFor(const store::ReservationRow& r, std::string_view user, std::string_view team);

// Whether `r` binds another's attempt bounded by `bound_ms` (nullopt: unbounded) that starts at
// `now_ms`: the window is on, or begins before the attempt must have ended.
bool ReservationBinds(const store::ReservationRow& r, std::optional<int64_t> bound_ms,
                      int64_t now_ms);

// "team vision" or "user alice".
std::string DescribeHolder(const store::ReservationRow& r);

// "4 of n1's 8 GPUs are reserved for team vision until 18:00 UTC (reservation 3)", or before the
// window "... for team vision from 14:00 UTC until 18:00 UTC (reservation 3)".
std::string ReservedPhrase(const store::ReservationRow& r, int agent_gpus, int64_t now_ms);

// The detail of an attempt stopped at the window's start: "2 of n1's GPUs are reserved for
// team vision from 14:00 UTC (reservation 3)".
std::string ReservationStopDetail(const store::ReservationRow& r, int64_t now_ms);

// Checks a new reservation against its agent's GPU count and the other reservations of the
// agent not cancelled (`others`): InvalidArgument naming what is wrong (a window that ends
// before it starts or has ended at `now_ms`, more GPUs than the agent has, overlapping
// reservations that together ask for more than it has).
Status ValidateReservation(const store::ReservationRow& r, int agent_gpus,
                           const std::vector<const store::ReservationRow*>& others, int64_t now_ms);

// The reservations not cancelled that have not ended, by id. Each Add or Remove bumps its
// generation so that a timer armed for an earlier state is known stale.
class Reservations {
 public:
  void Load(std::vector<store::ReservationRow> rows);
  void Add(store::ReservationRow row);
  bool Remove(int64_t id);
  const store::ReservationRow* Find(int64_t id) const;
  // The agent's, by start.
  std::vector<const store::ReservationRow*> OnAgent(std::string_view agent_id) const;
  bool empty() const { return rows_.empty(); }
  const std::map<int64_t, store::ReservationRow>& all() const { return rows_; }

 private:
  std::map<int64_t, store::ReservationRow> rows_;
};

// How many of an agent's free GPUs the reservations `on_agent` keep from an attempt of `user`
// and `team` bounded by `bound_ms` that starts at `now_ms`: for each one that binds it and is
// not its own, its GPUs less those the holder's attempts use there now (`holder_uses`) when the
// window is on. `first`, when not null, is set to the first reservation that keeps any.
int KeptGpus(const std::vector<const store::ReservationRow*>& on_agent, std::string_view user,
             std::string_view team, std::optional<int64_t> bound_ms, int64_t now_ms,
             const std::function<int(const store::ReservationRow&)>& holder_uses,
             const store::ReservationRow** first);

}  // namespace longhaul::scheduler

// Reservations on the scheduler's side (docs/scheduling.md, "Reservations"): setting, listing
// and cancelling them, keeping others' attempts off the reserved GPUs, and at a window's start
// stopping what of others still runs on GPUs it needs. The rules are in reservation.cc.
#include <algorithm>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/maintenance.h"
#include "daemon/scheduler/reservation.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::scheduler {
namespace {

v1::Reservation ReservationToProto(const store::ReservationRow& r) {
  v1::Reservation out;
  out.set_id(r.id);
  out.set_agent_id(r.agent_id);
  out.set_gpus(r.gpus);
  out.set_holder_kind(r.holder_kind);
  out.set_holder(r.holder);
  out.set_from_ms(r.from_ms);
  out.set_until_ms(r.until_ms);
  out.set_reason(r.reason);
  out.set_by(r.by);
  out.set_set_at_ms(r.set_at_ms);
  out.set_cancelled_at_ms(r.cancelled_at_ms);
  out.set_cancelled_by(r.cancelled_by);
  out.set_cancel_reason(r.cancel_reason);
  return out;
}

}  // namespace

Status Scheduler::LoadReservations() {
  ASSIGN_OR_RETURN(std::vector<store::ReservationRow> rows,
                   store_->LoadReservations(false, clock_->NowMs()));
  reservations_.Load(std::move(rows));
  for (const auto& [id, r] : reservations_.all()) ArmReservationTimers(r);
  return OkStatus();
}

void Scheduler::ArmReservationTimers(const store::ReservationRow& r) {
  int64_t now = clock_->NowMs();
  timers_.Push({std::max(r.from_ms, now), TimerKind::kReservation, r.id, "start", 0});
  timers_.Push({std::max(r.until_ms, now), TimerKind::kReservation, r.id, "end", 0});
}

Result<v1::Reservation> Scheduler::Reserve(const v1::ReserveRequest& req) {
  AgentState* agent = agents_.Find(req.agent_id());
  if (agent == nullptr) {
    std::vector<std::string> names;
    for (const auto& [id, a] : agents_) names.push_back(id);
    return absl::NotFoundError(
        StrCat("no agent '", req.agent_id(), "'", workflow::DidYouMean(req.agent_id(), names)));
  }
  if (req.holder_kind() != "user" && req.holder_kind() != "team") {
    return absl::InvalidArgumentError(
        StrCat("holder kind '", req.holder_kind(), "': expected 'user' or 'team'"));
  }
  if (req.holder().empty()) {
    return absl::InvalidArgumentError(StrCat("no ", req.holder_kind(), " given"));
  }
  int64_t now = clock_->NowMs();
  store::ReservationRow r;
  r.agent_id = req.agent_id();
  int agent_gpus = static_cast<int>(agent->row.resources.gpus());
  r.gpus = req.all_gpus() ? agent_gpus : req.gpus();
  if (req.all_gpus() && agent_gpus == 0) {
    return absl::InvalidArgumentError(StrCat("--gpus all: agent ", r.agent_id, " has no GPUs"));
  }
  r.holder_kind = req.holder_kind();
  r.holder = req.holder();
  r.from_ms = std::max(req.from_ms(), now);  // 0 (or a time past): now
  r.until_ms = req.until_ms();
  r.reason = req.reason();
  r.by = req.by();
  r.set_at_ms = now;
  RETURN_IF_ERROR(ValidateReservation(r, agent_gpus, reservations_.OnAgent(r.agent_id), now));
  ASSIGN_OR_RETURN(r.id, store_->InsertReservation(r));
  reservations_.Add(r);
  ArmReservationTimers(r);
  GetLogger("scheduler")
      ->info("{} (set by {}: {})", ReservedPhrase(r, agent_gpus, now), r.by, r.reason);
  dispatch_needed_ = true;  // the ready stages are judged anew
  return ReservationToProto(r);
}

Result<v1::Reservation> Scheduler::Unreserve(int64_t id, const std::string& reason,
                                             const std::string& by) {
  const store::ReservationRow* found = reservations_.Find(id);
  if (found == nullptr) {
    return absl::NotFoundError(
        StrCat("no reservation ", id, " in force or to come (`longhaul reservations --all`)"));
  }
  store::ReservationRow r = *found;
  r.cancelled_at_ms = clock_->NowMs();
  r.cancelled_by = by;
  r.cancel_reason = reason;
  RETURN_IF_ERROR(store_->CancelReservation(id, r.cancelled_at_ms, by, reason));
  reservations_.Remove(id);
  GetLogger("scheduler")->info("reservation {}: cancelled by {}", id, by);
  dispatch_needed_ = true;
  return ReservationToProto(r);
}

Result<std::vector<v1::Reservation>> Scheduler::ListReservations(bool all) {
  ASSIGN_OR_RETURN(std::vector<store::ReservationRow> rows,
                   store_->LoadReservations(all, clock_->NowMs()));
  std::vector<v1::Reservation> out;
  for (const store::ReservationRow& r : rows) out.push_back(ReservationToProto(r));
  return out;
}

int Scheduler::HolderGpusOn(const AgentState& a, const store::ReservationRow& r) const {
  int uses = 0;
  for (int64_t id : a.attempts) {
    const AttemptState* at = runs_.FindAttempt(id);
    if (at == nullptr || !at->holds_resources || at->stage == nullptr) continue;
    const store::RunRow& run = at->stage->run->row;
    if (HeldFor(r, run.user, run.team)) uses += static_cast<int>(at->held.gpus());
  }
  return uses;
}

int Scheduler::ReservedFrom(const StageState* s, const AgentState& a,
                            const store::ReservationRow** first) const {
  if (reservations_.empty() || s->row.resources.gpus() <= 0) return 0;
  return KeptGpus(
      reservations_.OnAgent(a.row.id), s->run->row.user, s->run->row.team, AttemptBoundMs(*s->spec),
      clock_->NowMs(), [&](const store::ReservationRow& r) { return HolderGpusOn(a, r); }, first);
}

bool Scheduler::ReservationKeepsOff(const StageState* s, const AgentState& a) const {
  int kept = ReservedFrom(s, a, nullptr);
  return kept > 0 && a.free.gpus() - kept < s->row.resources.gpus();
}

bool Scheduler::ReservationKeepsOffEver(const StageState* s, const AgentState& a) const {
  if (reservations_.empty() || s->row.resources.gpus() <= 0) return false;
  // With all its GPUs free: what the reservations that bind it leave to it.
  int kept = KeptGpus(
      reservations_.OnAgent(a.row.id), s->run->row.user, s->run->row.team, AttemptBoundMs(*s->spec),
      clock_->NowMs(), [](const store::ReservationRow&) { return 0; }, nullptr);
  return kept > 0 && a.row.resources.gpus() - kept < s->row.resources.gpus();
}

std::string Scheduler::ReservationReason(const StageState* s) const {
  if (reservations_.empty() || s->row.resources.gpus() <= 0) return "";
  int64_t now = clock_->NowMs();
  for (const auto& [id, a] : agents_) {
    if (!Fits(a->row.resources, s->row.resources) || !MayGoTo(s, *a)) continue;
    const store::ReservationRow* first = nullptr;
    if (ReservedFrom(s, *a, &first) == 0 || first == nullptr) continue;
    return StrCat(": ", ReservedPhrase(*first, static_cast<int>(a->row.resources.gpus()), now));
  }
  return "";
}

bool Scheduler::ReservationHolds(StageState* s) {
  if (reservations_.empty() || s->row.resources.gpus() <= 0) return false;
  bool kept_off = false;
  for (const auto& [id, a] : agents_) {
    if (Fits(a->free, s->row.resources) && MayGoTo(s, *a) && !DrainKeepsOff(s, *a) &&
        ReservationKeepsOff(s, *a)) {
      kept_off = true;
      break;
    }
  }
  if (!kept_off) return false;
  std::string reason = ReadyReason(s);
  if (reason != s->row.reason) {
    s->row.reason = std::move(reason);
    MarkChanged(s);
  }
  return true;
}

void Scheduler::ReservationDue(int64_t id, const std::string& edge) {
  const store::ReservationRow* found = reservations_.Find(id);
  if (found == nullptr) return;  // cancelled
  int64_t now = clock_->NowMs();
  dispatch_needed_ = true;  // the GPUs are held now, or everyone's again
  if (edge == "end") {
    if (found->until_ms > now) return;  // stale
    GetLogger("scheduler")->info("reservation {}: ended", id);
    reservations_.Remove(id);
    return;
  }
  store::ReservationRow r = *found;
  AgentState* agent = agents_.Find(r.agent_id);
  if (agent == nullptr || r.from_ms > now || r.until_ms <= now) return;
  // What it needs and does not have: its GPUs the holder does not use, less what is free (and
  // not kept for the agent's other reservations from the same attempts).
  int short_by =
      std::max(0, r.gpus - HolderGpusOn(*agent, r)) - static_cast<int>(agent->free.gpus());
  if (short_by <= 0) return;
  std::vector<AttemptState*> others;
  for (int64_t aid : agent->attempts) {
    AttemptState* a = runs_.FindAttempt(aid);
    if (a == nullptr || !a->holds_resources || !a->kill_reason.empty() || a->stage == nullptr) {
      continue;
    }
    const store::RunRow& run = a->stage->run->row;
    if (a->held.gpus() > 0 && !HeldFor(r, run.user, run.team)) others.push_back(a);
  }
  // The youngest first: they lose the least.
  std::sort(others.begin(), others.end(), [](const AttemptState* x, const AttemptState* y) {
    return x->row.started_at_ms.value_or(0) > y->row.started_at_ms.value_or(0);
  });
  std::string detail = ReservationStopDetail(r, now);
  for (AttemptState* a : others) {
    if (short_by <= 0) break;
    GetLogger("scheduler")->info("attempt {}: stopped, {}", a->row.id, detail);
    short_by -= static_cast<int>(a->held.gpus());
    // As a drain stops one: a notice first when its stage asks for one, then SIGTERM, the
    // stage's grace, back to the queue with no retry spent; a resumable stage continues from
    // its checkpoint.
    StopAtCheckpoint(a, std::string(kReservationStopKind), detail);
  }
}

void Scheduler::FillReservations(const std::string& agent_id, v1::AgentInfo* out) const {
  for (const store::ReservationRow* r : reservations_.OnAgent(agent_id)) {
    *out->add_reservations() = ReservationToProto(*r);
  }
}

}  // namespace longhaul::scheduler

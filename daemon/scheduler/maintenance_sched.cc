// Maintenance windows on the scheduler's side (docs/scheduling.md, "Maintenance"): setting and
// clearing an agent's drain, keeping off it the attempts that could not end before its time,
// and stopping at that time what still runs there. The rule itself is in maintenance.cc.
#include <algorithm>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/maintenance.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {

Status Scheduler::LoadDrains() {
  ASSIGN_OR_RETURN(std::vector<store::AgentDrainRow> rows, store_->LoadAgentDrains());
  maintenance_.Load(std::move(rows));
  for (const auto& [id, d] : maintenance_.all()) ArmDrainTimer(d);
  return OkStatus();
}

void Scheduler::ArmDrainTimer(const store::AgentDrainRow& d) {
  timers_.Push({std::max(d.at_ms, clock_->NowMs()), TimerKind::kDrain, 0, d.agent_id,
                maintenance_.generation(d.agent_id)});
}

Result<v1::AgentInfo> Scheduler::SetAgentDrain(const std::string& agent_id, int64_t at_ms,
                                               bool undrain, const std::string& reason,
                                               const std::string& by) {
  if (agents_.Find(agent_id) == nullptr) {
    return absl::NotFoundError(StrCat("no agent '", agent_id, "'"));
  }
  int64_t now = clock_->NowMs();
  auto log = GetLogger("scheduler");
  if (undrain) {
    if (maintenance_.Find(agent_id) == nullptr) {
      return absl::FailedPreconditionError(StrCat("agent ", agent_id, " is not drained"));
    }
    RETURN_IF_ERROR(store_->DeleteAgentDrain(agent_id));
    maintenance_.Clear(agent_id);
    log->info("agent {}: undrained by {}", agent_id, by);
  } else {
    if (at_ms < 0) {
      return absl::InvalidArgumentError(StrCat("--at: a time before 1970 (", at_ms, " ms)"));
    }
    store::AgentDrainRow d;
    d.agent_id = agent_id;
    d.at_ms = std::max(at_ms, now);  // 0 (or a time past): now
    d.reason = reason;
    d.by = by;
    d.set_at_ms = now;
    RETURN_IF_ERROR(store_->PutAgentDrain(d));
    maintenance_.Set(d);
    ArmDrainTimer(d);
    log->info("agent {}: drains at {} by {}{}", agent_id, FormatDrainTime(d.at_ms, now), by,
              reason.empty() ? "" : StrCat(": ", reason));
  }
  dispatch_needed_ = true;  // kept off, or offered again: the ready stages are judged anew
  for (v1::AgentInfo& info : ListAgents()) {
    if (info.id() == agent_id) return std::move(info);
  }
  return absl::NotFoundError(StrCat("no agent '", agent_id, "'"));
}

bool Scheduler::DrainKeepsOff(const StageState* s, const AgentState& a) const {
  if (maintenance_.empty()) return false;
  const store::AgentDrainRow* d = maintenance_.Find(a.row.id);
  return d != nullptr && !FitsBeforeDrain(*d, AttemptBoundMs(*s->spec), clock_->NowMs());
}

bool Scheduler::DrainHolds(StageState* s) {
  if (maintenance_.empty()) return false;
  const v1::Resources& need = s->row.resources;
  const store::AgentDrainRow* first = nullptr;  // of an agent that could hold it
  bool room_kept_off = false;                   // a drained agent has room for it now
  bool other_could = false;                     // an agent without a drain could hold it
  for (const auto& [id, a] : agents_) {
    if (!Fits(a->row.resources, need) || !MayGoTo(s, *a)) continue;
    if (!DrainKeepsOff(s, *a)) {
      other_could = true;
      continue;
    }
    if (first == nullptr) first = maintenance_.Find(id);
    room_kept_off = room_kept_off || Fits(a->free, need);
  }
  if (first == nullptr) return false;
  // It waits for room on an agent without a drain as any stage does (a GPU stage reserving
  // there), unless only a drain keeps it off an agent with room now.
  if (other_could && (need.gpus() > 0 || !room_kept_off)) return false;
  std::string reason = DrainWaitReason(*first, *s->spec, clock_->NowMs());
  if (reason != s->row.reason) {
    s->row.reason = std::move(reason);
    MarkChanged(s);
  }
  return true;
}

void Scheduler::DrainDue(const std::string& agent_id, uint64_t generation) {
  const store::AgentDrainRow* d = maintenance_.Find(agent_id);
  if (d == nullptr || maintenance_.generation(agent_id) != generation) return;  // stale
  dispatch_needed_ = true;  // the ready stages' reasons say "drained since" now
  AgentState* agent = agents_.Find(agent_id);
  if (agent == nullptr) return;
  std::string detail = DrainStopDetail(*d, clock_->NowMs());
  std::vector<int64_t> ids(agent->attempts.begin(), agent->attempts.end());
  for (int64_t id : ids) {
    AttemptState* a = runs_.FindAttempt(id);
    if (a == nullptr || !a->kill_reason.empty()) continue;
    GetLogger("scheduler")->info("attempt {}: stopped, {}", id, detail);
    // As a hard budget stops one: SIGTERM, the stage's grace, back to the queue with no retry
    // spent (AttemptFailedOrSucceeded); a resumable stage continues from its checkpoint.
    // A stage with `preempt_notice` is asked to checkpoint first (stop_notice_sched.cc).
    StopAtCheckpoint(a, std::string(kDrainStopKind), detail);
  }
}

void Scheduler::FillDrain(const std::string& agent_id, v1::AgentInfo* out) const {
  const store::AgentDrainRow* d = maintenance_.Find(agent_id);
  if (d == nullptr) return;
  v1::AgentDrain* drain = out->mutable_drain();
  drain->set_at_ms(d->at_ms);
  drain->set_reason(d->reason);
  drain->set_by(d->by);
  drain->set_set_at_ms(d->set_at_ms);
}

}  // namespace longhaul::scheduler

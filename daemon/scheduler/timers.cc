// Deadlines: retry backoff, attempt timeouts and stalls, agent silence and loss.
#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {

void Scheduler::ArmAttemptTimers(AttemptState* a) {
  const workflow::StageSpec* spec = a->stage->spec;
  int64_t start = a->row.created_at_ms > 0 ? a->row.created_at_ms : clock_->NowMs();
  if (spec->timeout_ms) {
    timers_.Push({start + *spec->timeout_ms, TimerKind::kTimeout, a->row.id, "", a->timer_gen});
  }
  if (spec->kind == workflow::StageKind::kService && spec->ready_timeout_ms) {
    timers_.Push({start + *spec->ready_timeout_ms, TimerKind::kReadyTimeout, a->row.id, "",
                  a->timer_gen});
  }
  if (spec->stall_timeout_ms) {
    timers_.Push({a->last_progress_ms + *spec->stall_timeout_ms, TimerKind::kStall, a->row.id, "",
                  a->timer_gen});
  }
}

std::optional<int64_t> Scheduler::NextDeadline() const {
  std::optional<int64_t> next = gpus_.NextCheckMs();  // a quarantined GPU's pre-flight
  if (timers_.empty()) return next;
  return next ? std::min(*next, timers_.next_deadline()) : timers_.next_deadline();
}

void Scheduler::Tick(int64_t lag_ms) {
  int64_t now = clock_->NowMs();
  if (lag_ms > options_.agent_timeout_ms / 2) {
    // The coordinator itself did not run for a while: heartbeats could not be read, so
    // silence over that time says nothing about the agents. Give every agent a fresh window.
    GetLogger("scheduler")->warn("coordinator was stalled for {}; agents get a grace period",
                                 FormatDurationMs(lag_ms));
    for (auto& [id, agent] : agents_) {
      agent->row.last_seen_ms = std::max(agent->row.last_seen_ms, now);
    }
  }
  last_tick_ms_ = now;
  Timer t;
  while (timers_.PopDue(now, &t)) FireTimer(t);
  AskGpuChecks(now);
}

void Scheduler::FireTimer(const Timer& t) {
  int64_t now = clock_->NowMs();
  switch (t.kind) {
    case TimerKind::kRetry: {
      RunState* run = runs_.OwnerOfStage(t.id);
      if (run == nullptr) return;
      for (auto& s : run->stages) {
        if (s->row.id != t.id) continue;
        if (s->retry_gen != t.generation || s->row.status != v1::STAGE_WAITING) return;
        s->row.next_retry_at_ms.reset();
        MaybeReady(s.get());
        return;
      }
      return;
    }
    case TimerKind::kTimeout: {
      AttemptState* a = runs_.FindAttempt(t.id);
      if (a == nullptr || a->timer_gen != t.generation || !a->kill_reason.empty()) return;
      StopAttempt(a, "timeout",
                  StrCat("ran longer than ", FormatDurationMs(*a->stage->spec->timeout_ms)));
      return;
    }
    case TimerKind::kReadyTimeout: {
      AttemptState* a = runs_.FindAttempt(t.id);
      if (a == nullptr || a->timer_gen != t.generation || !a->kill_reason.empty()) return;
      if (a->stage->row.status == v1::STAGE_SERVING) return;
      StopAttempt(a, "timeout",
                  StrCat("not ready after ", FormatDurationMs(*a->stage->spec->ready_timeout_ms)));
      return;
    }
    case TimerKind::kStall: {
      AttemptState* a = runs_.FindAttempt(t.id);
      if (a == nullptr || a->timer_gen != t.generation || !a->kill_reason.empty()) return;
      int64_t limit = *a->stage->spec->stall_timeout_ms;
      if (a->row.state == v1::ATTEMPT_UNKNOWN) {
        // Its agent is away: no progress could arrive. Judge it when the agent is back.
        timers_.Push({now + limit, TimerKind::kStall, a->row.id, "", a->timer_gen});
        return;
      }
      if (a->stage->row.status == v1::STAGE_SERVING) return;  // a serving service is idle by design
      if (now - a->last_progress_ms < limit) {
        timers_.Push({a->last_progress_ms + limit, TimerKind::kStall, a->row.id, "",
                      a->timer_gen});
        return;
      }
      StopAttempt(a, "stalled", StrCat("no progress for ", FormatDurationMs(limit)));
      Notice("stage_stalled", a->stage->run, a->stage, a->row.number,
             StrCat("no progress for ", FormatDurationMs(limit)), a->row.agent_id);
      return;
    }
    case TimerKind::kQuota:
      dispatch_needed_ = true;
      return;
    case TimerKind::kBudget: {
      RunState* run = runs_.Find(t.id);
      if (run != nullptr && run->budget_gen == t.generation) {
        CheckBudget(run);
      }
      return;
    }
    case TimerKind::kDrain:
      DrainDue(t.key, t.generation);
      return;
    case TimerKind::kReservation:
      ReservationDue(t.id, t.key);
      return;
    case TimerKind::kScopeBudget:
      FireScopeBudgetTimer(t);
      return;
    case TimerKind::kStopNotice:
      FireStopNoticeTimer(t);
      return;
    case TimerKind::kAgentSilent:
    case TimerKind::kAgentLost: {
      AgentState* agent = agents_.Find(t.key);
      if (agent == nullptr) return;
      if (agent->timer_gen != t.generation) return;
      bool silent_kind = t.kind == TimerKind::kAgentSilent;
      int64_t limit = silent_kind ? options_.agent_timeout_ms : options_.lost_after_ms;
      int64_t due = agent->row.last_seen_ms + limit;
      if (now < due) {
        timers_.Push({due, t.kind, 0, t.key, t.generation});  // heard from since: look again
        return;
      }
      // Fires once per silence; AgentHeard arms fresh timers when the agent speaks again.
      if (silent_kind) {
        AgentSilent(agent);
      } else {
        AgentLost(agent);
      }
      return;
    }
  }
}

}  // namespace longhaul::scheduler

// Readiness, and the life of service stages (`kind: service`; docs/architecture.md, "States"):
// a service starts only when a dependent must really run, serves once it reports ready, and
// stops when its last dependent has ended. If it dies while dependents run, they fail with
// "service_lost" and their retry policies decide.
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

bool IsLive(v1::StageStatus s) {
  return s == v1::STAGE_WAITING || s == v1::STAGE_READY || s == v1::STAGE_RUNNING ||
         s == v1::STAGE_STARTING || s == v1::STAGE_SERVING;
}

bool IsBad(v1::StageStatus s) {
  return s == v1::STAGE_FAILED || s == v1::STAGE_SKIPPED || s == v1::STAGE_CANCELLED;
}

}  // namespace

bool Scheduler::IsService(const StageState* s) {
  return s->spec->kind == workflow::StageKind::kService;
}

void Scheduler::MaybeReady(StageState* s) {
  if (s->row.status != v1::STAGE_WAITING || s->row.next_retry_at_ms || s->run->cancel_requested) {
    return;
  }
  RunState* run = s->run;
  for (int d : s->deps) {
    StageState* dep = run->stages[d].get();
    if (IsBad(dep->row.status)) {
      SetStageStatus(
          s, v1::STAGE_SKIPPED,
          StrCat("needs '", dep->row.name, "', which ", StageStatusName(dep->row.status)));
      SkipDependents(s);
      Propagate(s);
      return;
    }
  }
  if (SkipIfSweepStopped(s)) return;
  if (!DepsSatisfied(s)) {
    // A service it needs may be wanted now, or may need to come back (a dependent retried
    // after the service had stopped or was left unstarted as unneeded).
    for (int d : s->deps) {
      StageState* dep = run->stages[d].get();
      if (!IsService(dep)) continue;
      if (dep->row.status == v1::STAGE_STOPPED || dep->row.status == v1::STAGE_CACHED) {
        dep->row.cached_from_stage_id.reset();
        if (dep->extras) {
          dep->extras->cached_from_run_id = 0;
          dep->extras->cached_from_stage.clear();
        }
        SetStageStatus(dep, v1::STAGE_WAITING, "");
      }
      MaybeReady(dep);
    }
    return;
  }
  if (IsService(s) && !ServiceWanted(s)) return;
  MarkReady(s);
}

bool Scheduler::ServiceWanted(const StageState* s) const {
  RunState* run = s->run;
  for (int d : s->dependents) {
    const StageState* dep = run->stages[d].get();
    if (dep->row.status != v1::STAGE_WAITING && dep->row.status != v1::STAGE_READY) continue;
    bool others_done = true;
    for (int x : dep->deps) {
      const StageState* other = run->stages[x].get();
      if (other == s || IsService(other)) continue;
      if (other->row.status != v1::STAGE_SUCCEEDED && other->row.status != v1::STAGE_CACHED &&
          other->row.status != v1::STAGE_STOPPED_EARLY) {
        others_done = false;
      }
    }
    if (others_done) return true;
  }
  return false;
}

void Scheduler::Propagate(StageState* s) {
  RunState* run = s->run;
  for (int d : s->dependents) MaybeReady(run->stages[d].get());
  if (IsTerminal(s->row.status)) {
    for (int d : s->deps) {
      StageState* dep = run->stages[d].get();
      if (IsService(dep)) MaybeStopService(dep);
    }
  }
}

void Scheduler::MaybeStopService(StageState* s) {
  for (int d : s->dependents) {
    if (IsLive(s->run->stages[d]->row.status)) return;
  }
  switch (s->row.status) {
    case v1::STAGE_STARTING:
    case v1::STAGE_SERVING:
    case v1::STAGE_RUNNING:
      if (s->current) StopAttempt(s->current, "stopped", "no dependent needs it any more");
      break;
    case v1::STAGE_WAITING:
    case v1::STAGE_READY:
      if (s->row.attempt_count > 0) {
        // It ran and failed, and waits to retry: no longer needed, it ends as it failed, with
        // its last reason, not as a service nobody asked for.
        StageFailed(
            s, v1::STAGE_FAILED,
            s->retry_after.empty() ? std::string("its last attempt failed") : s->retry_after);
        break;
      }
      SetStageStatus(s, v1::STAGE_SKIPPED, "no dependent needs it");
      Propagate(s);
      break;
    default:
      break;
  }
}

bool Scheduler::ServiceAttemptEnded(AttemptState* a, const std::string& kind,
                                    const std::string& reason) {
  StageState* s = a->stage;
  bool needed = false;
  for (int d : s->dependents) {
    if (IsLive(s->run->stages[d]->row.status)) needed = true;
  }
  if (kind == "cancelled" || s->run->cancel_requested) return false;
  // Stopped to free room: by BreakServiceWait (no retry spent) or by a preemption (one
  // infrastructure retry spent). Ready again when needed.
  bool yielded = kind == "yielded" || PreemptedEnded(s, a, kind);
  if (yielded && needed) {
    SetStageStatus(
        s, v1::STAGE_WAITING,
        kind == "yielded" ? StrCat("stopped to free room: ", a->kill_detail) : a->row.reason);
    MaybeReady(s);
    return true;
  }
  if (!needed && kind != "stopped" && !yielded && kind != "success" &&
      s->row.status == v1::STAGE_STARTING) {
    // Never ready, and it failed by itself: that is how it ends, whoever still needs it.
    StageFailed(s, v1::STAGE_FAILED, reason);
    return true;
  }
  if (kind == "stopped" || yielded || !needed) {
    SetStageStatus(s, v1::STAGE_STOPPED,
                   kind == "stopped" || yielded || kind == "success" ? "" : reason);
    Propagate(s);
    MaybeFinishRun(s->run);
    return true;
  }
  // It ended while dependents needed it: those running lose it now.
  std::string why =
      StrCat("service '", s->row.name, "' ended: ", kind == "success" ? "exit 0" : reason);
  GetLogger("scheduler")->warn("run {}: {}", s->run->row.id, why);
  Notice("service_lost", s->run, s, a->row.number, why, a->row.agent_id);
  for (int d : s->dependents) {
    StageState* dep = s->run->stages[d].get();
    if (dep->current && dep->current->kill_reason.empty()) {
      StopAttempt(dep->current, "service_lost", why);
    }
  }
  return false;
}

}  // namespace longhaul::scheduler

// How attempts start and end, and what the retry policy does about it.
#include <csignal>
#include <cstring>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

// How the agent's AttemptExited.reason begins when the stage ran but its exit status is not
// known (docs/agent.md, "How an attempt ends, as reported").
constexpr char kExitUnknownPrefix[] = "exit status unknown";

std::string SignalText(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? StrCat("signal ", sig, " (SIG", name, ")") : StrCat("signal ", sig);
}

}  // namespace

void Scheduler::HandleStarted(AttemptState* a, const v1::AttemptStarted& msg) {
  if (IsTerminal(a->row.state)) return;
  if (metrics_ != nullptr && a->row.state != v1::ATTEMPT_RUNNING) {
    metrics_->attempts_started++;
    if (a->stage != nullptr && a->stage->ready_at_ms > 0) {
      metrics_->handoff_seconds.Observe(
          static_cast<double>(std::max<int64_t>(0, clock_->NowMs() - a->stage->ready_at_ms)) /
          1000.0);
      a->stage->ready_at_ms = 0;
    }
  }
  a->row.state = v1::ATTEMPT_RUNNING;
  if (!a->row.reason.empty()) {  // a queued attempt's "PENDING (Resources)": it runs now
    if (a->stage != nullptr && a->stage->current == a && a->stage->row.reason == a->row.reason) {
      a->stage->row.reason.clear();
    }
    a->row.reason.clear();
  }
  a->row.pid = msg.pid();
  if (msg.has_environment()) batch_.environments.emplace_back(a->row.id, msg.environment());
  if (msg.started_at_ms() > 0) a->row.started_at_ms = msg.started_at_ms();
  if (!a->row.started_at_ms) a->row.started_at_ms = clock_->NowMs();
  Touch(a);
  if (a->stage) MarkChanged(a->stage);
}

void Scheduler::HandleExited(AgentState* agent, const v1::AttemptExited& msg) {
  if (msg.id_collision()) {
    // The agent holds this id for another attempt and started nothing (a store restored from a
    // backup that predates ids it gave out): lost, retried under a new id; no AckExit, which
    // would close the other attempt's record.
    store_->RaiseAttemptIds(msg.attempt_id());
    AttemptState* a = runs_.FindAttempt(msg.attempt_id());
    if (a != nullptr && a->row.agent_id == agent->row.id && !IsTerminal(a->row.state)) {
      GetLogger("scheduler")->error("agent {}: {}", agent->row.id, msg.reason());
      AttemptEnded(a, v1::ATTEMPT_LOST, "lost", msg.reason());
    }
    return;
  }
  v1::CoordinatorMessage ack;
  ack.mutable_ack_exit()->set_attempt_id(msg.attempt_id());
  SendToAgent(agent->row.id, ack);

  AttemptState* a = runs_.FindAttempt(msg.attempt_id());
  if (a == nullptr || a->row.agent_id != agent->row.id) {
    // Not a live attempt of this agent: an attempt already declared lost (or fenced) that ran
    // on. Its result goes into its own history and changes nothing else; when its run has
    // ended meanwhile (and left memory), into the stored row.
    if (AttemptState* old = runs_.FindAnyAttempt(msg.attempt_id())) {
      if (NoteLateExit(old->row, agent->row.id, msg)) Touch(old);
      return;
    }
    Result<store::AttemptRow> row = store_->LoadAttemptById(msg.attempt_id());
    if (row.ok() && NoteLateExit(*row, agent->row.id, msg)) {
      if (Status st = store_->UpdateAttempt(*row); !st.ok()) {
        GetLogger("scheduler")->error("attempt {}: {}", row->id, ToStd(st.message()));
      }
    }
    return;
  }
  a->row.exit_code = msg.exit_code();
  a->row.signal = msg.signal();
  a->row.ended_at_ms = msg.ended_at_ms() > 0 ? msg.ended_at_ms() : clock_->NowMs();
  if (msg.last_seq() > a->row.events) a->row.events = msg.last_seq();

  std::string kind, reason;
  v1::AttemptState state = v1::ATTEMPT_EXITED;
  if (!a->kill_reason.empty()) {
    kind = a->kill_reason;
    reason = a->kill_detail.empty() ? kind : StrCat(kind, ": ", a->kill_detail);
    state = v1::ATTEMPT_KILLED;
  } else if (StartsWith(msg.reason(), "lost")) {
    kind = "lost";
    reason = msg.reason();
    state = v1::ATTEMPT_LOST;
  } else if (!msg.failure_kind().empty()) {
    // The executor ended it (Slurm: preempted, node_fail, oom, timeout, cancelled_outside).
    kind = msg.failure_kind();
    reason = msg.reason().empty() ? kind : msg.reason();
    state = v1::ATTEMPT_KILLED;
    if (kind == "node_fail" && a->stage != nullptr && a->stage->current == a) {
      AvoidFailedNode(a->stage, *agent, msg.node());
    }
  } else if (msg.start_failed()) {
    kind = "start";
    reason = msg.reason().empty() ? "could not start" : msg.reason();
  } else if (StartsWith(msg.reason(), kExitUnknownPrefix)) {
    // The stage ran but how it ended is not known (its shim died, or exit.json could not be
    // written on a full disk): the infrastructure's failure, not the stage's; -1 is no code.
    kind = "lost";
    reason = msg.reason();
    state = v1::ATTEMPT_LOST;
  } else if (msg.signal() != 0) {
    kind = "signal";
    reason = SignalText(msg.signal());
    state = v1::ATTEMPT_KILLED;
  } else if (msg.exit_code() != 0) {
    kind = "exit";
    reason = StrCat("exit ", msg.exit_code());
  } else {
    kind = "success";
  }
  AttemptEnded(a, state, kind, reason);
  if (msg.leftovers_killed() > 0) {
    // Said beside how it ended, success included: such a process held the attempt's files,
    // its GPU memory, or a port, until the shim killed it.
    std::string note =
        msg.leftovers_killed() == 1
            ? "1 process outlived the stage and was killed"
            : StrCat(msg.leftovers_killed(), " processes outlived the stage and were killed");
    a->row.reason = a->row.reason.empty() ? note : StrCat(a->row.reason, "; ", note);
    Touch(a);
  }
}

bool Scheduler::NoteLateExit(store::AttemptRow& row, const std::string& agent_id,
                             const v1::AttemptExited& msg) {
  if (row.agent_id != agent_id || row.exit_code) return false;
  row.exit_code = msg.exit_code();
  row.signal = msg.signal();
  row.events = std::max(row.events, msg.last_seq());
  row.reason +=
      StrCat(" (it ended later on ", agent_id, ": ",
             msg.signal() ? SignalText(msg.signal()) : StrCat("exit ", msg.exit_code()), ")");
  return true;
}

int64_t Scheduler::BackoffMs(const workflow::RetryPolicy& policy, int retry_number) {
  double base = static_cast<double>(policy.backoff_ms);
  for (int i = 1; i < retry_number && base < static_cast<double>(policy.max_backoff_ms); ++i) {
    base *= 2;
  }
  base = std::min(base, static_cast<double>(policy.max_backoff_ms));
  // "Equal jitter": half fixed, half random, so retries of many stages spread out but none
  // comes back sooner than half the backoff.
  std::uniform_real_distribution<double> dist(0.5, 1.0);
  return static_cast<int64_t>(base * dist(rng_));
}

void Scheduler::AttemptEnded(AttemptState* a, v1::AttemptState state, const std::string& kind,
                             const std::string& reason) {
  int64_t now = clock_->NowMs();
  if (metrics_ != nullptr && kind != "success" && kind != "stopped_early") {
    metrics_->attempt_failures.Add(kind);
  }
  a->row.state = state;
  a->row.reason = kind == "success" ? "" : reason;
  if (!a->row.ended_at_ms) a->row.ended_at_ms = now;
  a->timer_gen++;
  Touch(a);
  ReleaseResources(a);
  runs_.RemoveLiveAttempt(a->row.id);
  preemptions_.Ended(a->row.id);
  notices_.Ended(a->row.id);
  if (!a->release_queued) {
    a->release_queued = true;
    batch_.ended_attempts.push_back(a);
  }
  StageState* s = a->stage;
  if (s == nullptr || s->current != a) return;
  s->current = nullptr;
  MarkChanged(s);
  auto log = GetLogger("scheduler");
  std::string kind_now = kind, reason_now = reason;
  if (IsService(s)) {
    if (ServiceAttemptEnded(a, kind, reason)) return;
    if (kind == "success") {  // a service that ends by itself while needed has failed
      kind_now = "exit";
      reason_now = "exited (code 0) while dependents needed it";
    }
  }
  AttemptFailedOrSucceeded(s, a, kind_now, reason_now);
}

void Scheduler::AttemptFailedOrSucceeded(StageState* s, AttemptState* a, const std::string& kind,
                                         const std::string& reason) {
  int64_t now = clock_->NowMs();
  auto log = GetLogger("scheduler");
  if (kind == "success") {
    StageSucceeded(s);
    return;
  }
  log->info("run {} stage {} attempt {}: {}", s->run->row.id, s->row.name, a->row.number, reason);
  if (kind == "cancelled" || s->run->cancel_requested) {
    StageFailed(s, v1::STAGE_CANCELLED, reason, a);
    return;
  }
  // Its run's hard budget stopped it (it waits for a raise, no retry), its agent's drain did
  // (it goes elsewhere or waits for the undrain; no retry), or a preemption did (its
  // infrastructure retry): back to the queue, at once.
  if (kind == "budget" || kind == kDrainStopKind || kind == kReservationStopKind ||
      PreemptedEnded(s, a, kind)) {
    MarkReady(s);
    return;
  }
  if (kind == "stopped_early") {  // its sweep's early_stop rule: not a failure, no retry
    StageStoppedEarly(s, a->kill_detail);
    return;
  }
  const workflow::RetryPolicy& policy = s->spec->retry;
  bool retry_on_kind = policy.on.count(kind) > 0;
  if (retry_on_kind && kind == "exit" && !policy.exit_codes.empty()) {
    retry_on_kind = false;
    for (int code : policy.exit_codes) {
      if (a->row.exit_code && code == *a->row.exit_code) retry_on_kind = true;
    }
  }
  // Preemption, a failed node or a lost agent spend their own budget, not the stage's.
  bool infra = workflow::IsInfraFailure(kind);
  int& used = infra ? s->row.infra_retries_used : s->row.retries_used;
  int limit = infra ? policy.infra_limit : policy.limit;
  const char* budget = infra ? " infrastructure" : "";
  if (retry_on_kind && used < limit) {
    used++;
    int64_t delay = BackoffMs(policy, used);
    s->row.next_retry_at_ms = now + delay;
    s->retry_gen++;
    s->retry_after = reason;
    SetStageStatus(
        s, v1::STAGE_WAITING,
        StrCat(reason, ";", budget, " retry ", used, "/", limit, " in ", FormatDurationMs(delay)));
    timers_.Push({now + delay, TimerKind::kRetry, s->row.id, "", s->retry_gen});
    return;
  }
  std::string final_reason = reason;
  if (retry_on_kind && limit > 0) {
    final_reason += StrCat(" (after ", limit, budget, " retries)");
  }
  StageFailed(s, v1::STAGE_FAILED, final_reason, a);
}

}  // namespace longhaul::scheduler

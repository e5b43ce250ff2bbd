// Agent: cancelling attempts and letting go of them once the coordinator has their exit.
#include <signal.h>

#include <cstring>

#include "agent/lib/agent.h"
#include "agent/lib/pidfd.h"
#include "core/strings.h"

namespace longhaul::agent {

void Agent::HandleCancel(const v1::CancelAttempt& cancel) {
  Attempt* a = Find(cancel.attempt_id());
  if (a == nullptr) {
    log_->info("cancel for attempt {}, which this agent does not run; nothing to do",
               cancel.attempt_id());
    return;
  }
  if (a->exit) return;  // ended already; its exit report stands
  CancelInfo c;
  c.reason = cancel.reason().empty() ? "cancelled" : cancel.reason();
  c.grace_ms = cancel.grace_ms() > 0 ? cancel.grace_ms() : config_.default_grace_ms;
  a->cancel = c;
  if (Status s = a->dir.WriteCancel(c); !s.ok())
    log_->error("attempt {}: {}", a->id, ToStd(s.message()));
  log_->info("attempt {}: cancelling ({}, grace {} ms)", a->id, c.reason, c.grace_ms);
  executor_->Cancel(*a);
}

void Agent::CancelWatched(Attempt& a) {
  if (a.watching_stage) {
    SignalStageGroup(a, SIGTERM);
  } else if (a.watched) {
    SignalShim(a);
  }
  // Otherwise the shim is still starting: OnWatchedStarted signals it once pid.json appears.
}

void Agent::SignalShim(Attempt& a) {
  a.cancel_signalled = true;
  // Through the pidfd, so a re-used pid can never be hit.
  if (PidfdSendSignal(a.watched->native_handle(), SIGTERM) != 0) {
    log_->warn("attempt {}: cannot signal the shim: {}", a.id, std::strerror(errno));
  }
}

void Agent::SignalStageGroup(Attempt& a, int sig) {
  if (!a.pid || !ProcessMatches(a.pid->stage_pid, a.pid->stage_start)) return;
  a.cancel_signalled = true;
  if (::kill(-a.pid->stage_pid, sig) != 0) ::kill(a.pid->stage_pid, sig);
  if (sig == SIGTERM && a.cancel) {
    a.kill_timer.expires_after(std::chrono::milliseconds(a.cancel->grace_ms));
    a.kill_timer.async_wait([this, id = a.id](const boost::system::error_code& ec) {
      if (ec) return;
      if (Attempt* at = Find(id); at != nullptr && !at->exit) SignalStageGroup(*at, SIGKILL);
    });
  }
}

void Agent::HandleAckExit(const v1::AckExit& ack) {
  Attempt* a = Find(ack.attempt_id());
  if (a == nullptr) return;
  if (!a->exit) {
    log_->warn("AckExit for attempt {}, which is still running; ignored", a->id);
    return;
  }
  if (Status s = a->dir.MarkDone(); !s.ok()) {
    NoteWriteFailure(s);
    log_->error("attempt {}: {}", a->id, ToStd(s.message()));
  }
  Forget(a->id);
}

}  // namespace longhaul::agent

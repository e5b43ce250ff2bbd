// Agent: a notice before a stop (docs/agent.md, "Preemption notice"). The coordinator will
// stop the attempt soon (a preemption, a drain, a hard budget) and gives its stage, which asked
// for it with `preempt_notice`, time to write a checkpoint first: a line in the control file
// ($LONGHAUL_CONTROL) and SIGUSR1 to the stage's process group. Nothing is stopped here; a
// CancelAttempt follows.
#include <signal.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "agent/lib/agent.h"
#include "core/strings.h"

namespace longhaul::agent {

void Agent::HandlePreemptNotice(const v1::PreemptNotice& notice) {
  Attempt* a = Find(notice.attempt_id());
  if (a == nullptr || a->exit || a->cancel) {
    log_->info("preemption notice for attempt {}, which is not running here; nothing to do",
               notice.attempt_id());
    return;
  }
  nlohmann::json line = {
      {"preempt", {{"reason", notice.reason()}, {"deadline_ms", notice.deadline_ms()}}}};
  if (Status s = a->dir.AppendControl(line.dump()); !s.ok()) {
    NoteWriteFailure(s);
    log_->error("attempt {}: {}", a->id, ToStd(s.message()));
  }
  log_->info("attempt {}: asked to checkpoint before it is stopped ({})", a->id, notice.reason());
  executor_->Notice(*a);
}

void Agent::SignalNotice(Attempt& a) {
  // The stage's group, as a cancel's SIGTERM: the shim is outside it and runs on. A stage that
  // has not started yet reads the line when it does.
  if (!a.pid || !ProcessMatches(a.pid->stage_pid, a.pid->stage_start)) return;
  if (::kill(-a.pid->stage_pid, SIGUSR1) != 0 && ::kill(a.pid->stage_pid, SIGUSR1) != 0) {
    log_->warn("attempt {}: cannot signal the stage: {}", a.id, std::strerror(errno));
  }
}

}  // namespace longhaul::agent

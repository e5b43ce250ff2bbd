// Agent: which ExecutorPart runs the attempts, and the local one's calls into the agent's
// process watching (agent_start.cc, agent_watch.cc, agent_cancel.cc). The polled one is in
// agent_polled_executor.cc.
#include <memory>
#include <utility>

#include "agent/lib/agent_executors.h"

namespace longhaul::agent {

void Agent::WatchedProcesses::Start(Attempt& a, const v1::StartAttempt& spec, RunRequest req,
                                    const std::function<void()>& write_spec,
                                    const std::function<void(const Status&)>& fail) {
  agent_.StartWatched(a, spec, req, write_spec, fail);
}

void Agent::WatchedProcesses::Adopt(int64_t id, const AttemptDir& dir, bool even_if_done) {
  agent_.AdoptWatched(id, dir, even_if_done);
}

void Agent::WatchedProcesses::OnHeartbeat(const std::vector<int64_t>& ids) {
  // A safety net under inotify and pidfd: cheap checks that catch what a lost notification
  // (or a shim that died before writing anything) would leave waiting.
  for (int64_t id : ids) {
    Attempt* a = agent_.Find(id);
    if (a != nullptr && !a->exit) agent_.CheckProgress(*a);
  }
}

void Agent::WatchedProcesses::Cancel(Attempt& a) { agent_.CancelWatched(a); }

void Agent::WatchedProcesses::Notice(Attempt& a) { agent_.SignalNotice(a); }

void Agent::WatchedProcesses::OnStarted(Attempt& a) { agent_.OnWatchedStarted(a); }

void Agent::WatchedProcesses::OnExitFile(Attempt& a) {
  // With a watched shim, its pidfd reports the end; otherwise (a shim that was starting when
  // we were restarted) the file is all we get.
  if (!a.watched && !a.exit) agent_.CheckProgress(a);
}

int Agent::WatchedProcesses::Sweep(Attempt& a) { return agent_.SweepCgroup(a); }

std::unique_ptr<Agent::ExecutorPart> Agent::MakeExecutorPart() {
  if (runner_->watches_processes()) return std::make_unique<WatchedProcesses>(*this);
  return std::make_unique<PolledExecutor>(*this);
}

}  // namespace longhaul::agent

// The agent's two ExecutorParts (agent.h): what differs between running attempts as local
// processes and through a polled executor. Internal to the agent's .cc files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "agent/lib/agent.h"

namespace longhaul::agent {

// Local processes (LocalRunner): the shim is a detached process of this node, which the agent
// watches itself through a pidfd; it signals the shim or the stage's group to cancel, and
// sweeps an attempt cgroup of its own when a shim died without doing so. The work is the
// agent's (agent_start.cc, agent_watch.cc, agent_cancel.cc): it is what the Attempt's process
// fields are for.
class Agent::WatchedProcesses final : public Agent::ExecutorPart {
 public:
  explicit WatchedProcesses(Agent& agent) : agent_(agent) {}

  bool agent_cgroups() const override { return true; }
  void Start(Attempt& a, const v1::StartAttempt& spec, RunRequest req,
             const std::function<void()>& write_spec,
             const std::function<void(const Status&)>& fail) override;
  void Adopt(int64_t id, const AttemptDir& dir, bool even_if_done) override;
  void OnHeartbeat(const std::vector<int64_t>& ids) override;
  void Cancel(Attempt& a) override;
  void Notice(Attempt& a) override;
  void OnStarted(Attempt& a) override;
  void OnExitFile(Attempt& a) override;
  int Sweep(Attempt& a) override;

 private:
  Agent& agent_;
};

// A polled executor (SlurmRunner; docs/slurm.md): one job per attempt, submitted, queried and
// cancelled through the runner on the agent's worker threads, their answers coming back to the
// event loop; the attempt files are read at every heartbeat. States are polled in one batch, 15
// s after a submit or a change, backing off to 2 min while nothing changes
// (agent_polled_executor.cc).
class Agent::PolledExecutor final : public Agent::ExecutorPart {
 public:
  explicit PolledExecutor(Agent& agent) : agent_(agent) {}

  // Slurm's jobs keep Slurm's cgroups.
  bool agent_cgroups() const override { return false; }
  void Start(Attempt& a, const v1::StartAttempt& spec, RunRequest req,
             const std::function<void()>& write_spec,
             const std::function<void(const Status&)>& fail) override;
  void Adopt(int64_t id, const AttemptDir& dir, bool even_if_done) override;
  void OnHeartbeat(const std::vector<int64_t>& ids) override;
  void Cancel(Attempt& a) override { CancelJob(a); }
  // The stage runs on another node: the control file's line is all it gets (a signal through
  // scancel would reach the job's shim, for which SIGUSR1 is Slurm's time limit).
  void Notice(Attempt& /*a*/) override {}
  // The executor's polling watches it; a cancel went through the executor.
  void OnStarted(Attempt& /*a*/) override {}
  void OnExitFile(Attempt& a) override;
  // Slurm's cgroups, not the agent's: Slurm ends what a job leaves.
  int Sweep(Attempt& /*a*/) override { return 0; }

 private:
  void Submit(Attempt& a, RunRequest req);
  void OnSubmitted(int64_t id, const RunRequest& req, Result<Started> started);
  void AdoptJob(int64_t id, const AttemptDir& dir);
  // At every heartbeat: submits what waits to be, reads the attempt files, and queries the
  // executor when due.
  void Poll();
  void FlushCancels();
  void OnStates(Result<std::map<std::string, NativeState>> states,
                std::map<int64_t, Result<std::string>> found);
  void Check(Attempt& a, const NativeState* state);
  void CancelJob(Attempt& a);
  // AttemptQueued with `state` and `reason`, unless that is what was last sent.
  void ReportQueued(Attempt& a, const std::string& state, const std::string& reason);

  Agent& agent_;
  bool poll_in_flight_ = false;
  int64_t poll_at_ms_ = 0;                // the next status query is due then
  int64_t poll_every_ms_ = 0;             // the current wait between two (0: not started)
  bool submitted_ = false;                // a job was submitted since the last query
  std::vector<std::string> cancels_[2];   // jobs to cancel: [0] queued, [1] running
  bool cancel_posted_ = false;            // FlushCancels is on its way
};

}  // namespace longhaul::agent

// AttemptRunner on Slurm (docs/slurm.md): each attempt is one batch job whose script execs
// longhaul-shim, so the attempt dir (on a file system the nodes share) gets the same files as
// with the local runner. Talks to Slurm through its commands (sbatch, squeue, scontrol,
// scancel, found on PATH), each with a deadline.
//
//   Start      writes ATTEMPT_DIR/job.sh, runs `sbatch --parsable` and writes the job id to
//              ATTEMPT_DIR/job_id atomically as soon as sbatch answers
//   Find       `squeue --me --name=lh-<attempt id>`
//   Cancel     a running shim: `scancel --batch --signal=USR1` (the shim stops the stage with
//              its grace; the stage itself never gets USR1); a queued job: `scancel`
//   Reconcile  one `squeue --me -t all` for every job; `scontrol show job` for jobs it no
//              longer lists (at most 8 per call; the others are unknown until the next)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/lib/attempt_runner.h"

namespace longhaul::agent {

struct SlurmOptions {
  std::string partition;                // --partition, when set
  std::string account;                  // --account, when set
  std::vector<std::string> extra_args;  // passed to sbatch as they are
  int64_t signal_lead_s = 60;           // --signal=B:USR1@lead before the time limit
  bool gres_gpus = false;               // the cluster has GPUs as gres: --gres=gpu:N
  int64_t command_timeout_ms = 30'000;  // for each Slurm command
};

class SlurmRunner : public AttemptRunner {
 public:
  explicit SlurmRunner(SlurmOptions options) : options_(std::move(options)) {}

  std::string executor() const override { return "slurm"; }
  bool watches_processes() const override { return false; }
  Result<Started> Start(const RunRequest& req) override;
  Result<std::string> Find(int64_t attempt_id) override;
  Status Cancel(const std::string& native_id, bool running) override;
  Result<std::map<std::string, NativeState>> Reconcile(
      const std::vector<std::string>& native_ids) override;

  // The batch script for `req` and the sbatch command line that submits it (exposed for tests).
  static std::string BatchScript(const RunRequest& req);
  std::vector<std::string> SbatchArgs(const RunRequest& req) const;

 private:
  Result<NativeState> ShowJob(const std::string& id);

  const SlurmOptions options_;
};

// "lh-<attempt id>".
std::string SlurmJobName(int64_t attempt_id);
// Slurm's job state word -> phase (PENDING -> kPending, RUNNING -> kRunning, COMPLETED,
// PREEMPTED, ... -> kEnded; unknown words -> kUnknown).
NativePhase SlurmPhase(const std::string& state);
// Parses `squeue -h -o '%i|%T|%r|%N'` lines (the node list is optional) into states by job
// id; lines that do not parse are skipped.
std::map<std::string, NativeState> ParseSqueue(const std::string& text);
// `sbatch --parsable` prints "ID" or "ID;CLUSTER".
Result<std::string> ParseSbatch(const std::string& text);

}  // namespace longhaul::agent

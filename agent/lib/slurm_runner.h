// AttemptRunner on Slurm (docs/slurm.md): each attempt is one batch job whose script execs
// longhaul-shim, so the attempt dir (on a file system the nodes share) gets the same files as
// with the local runner. Talks to Slurm through its commands (sbatch, squeue, scontrol,
// scancel, found on PATH), each with a deadline.
//
//   Start      writes ATTEMPT_DIR/job.sh, runs `sbatch --parsable` and writes the job id to
//              ATTEMPT_DIR/job_id atomically as soon as sbatch answers. The run's priority
//              class picks --qos and --partition where the options map it. A stage with a
//              timeout gets --time capped at its partition's MaxTime, read with `scontrol -o show
//              partition` at the first such Start and every 10 minutes after (every minute
//              while it fails; meanwhile no cap is known and --time is not capped)
//   Find       `squeue --me --name=lh-<attempt id>`, the job whose working directory is the
//              attempt dir (the same name may be another coordinator's attempt)
//   Cancel     a running shim: `scancel --batch --signal=USR1` (the shim stops the stage with
//              its grace; the stage itself never gets USR1); a queued job: `scancel`
//   Reconcile  one `squeue --me -t all` for every job; for the jobs it no longer lists, one
//              `sacct -j ID,ID,...` for all of them, then `scontrol show job` for those sacct
//              does not know (at most 8 per call; the others are unknown until the next).
//              Once sacct says accounting is disabled, only scontrol is used.
//
// Errors: Unavailable when the command could not reach slurmctld (down, restarting): nothing
// is known, ask again later; FailedPrecondition when Slurm refused (sbatch's "Requested node
// configuration is not available"); DeadlineExceeded when it did not answer in time.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "agent/lib/attempt_runner.h"
#include "agent/lib/slurm_partitions.h"

namespace longhaul::agent {

struct SlurmOptions {
  std::string partition;  // --partition, when set
  // By the run's priority class (--slurm-class-qos, --slurm-class-partition): the --qos and
  // the --partition of its jobs. A class without an entry gets `partition` and no --qos.
  std::map<std::string, std::string> class_qos, class_partition;
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
  Result<std::string> Find(int64_t attempt_id, const std::string& attempt_dir) override;
  Status Cancel(const std::string& native_id, bool running) override;
  // One scancel per 200 jobs.
  Status CancelMany(const std::vector<std::string>& native_ids, bool running) override;
  Result<std::map<std::string, NativeState>> Reconcile(
      const std::vector<std::string>& native_ids) override;

  // The batch script for `req` and the sbatch command line that submits it (exposed for tests).
  // `slurm_gpus`: the job asks Slurm for GPUs (--gres), so the stage sees the devices Slurm
  // gave the job (its CUDA_VISIBLE_DEVICES), not the indices the coordinator counted with.
  static std::string BatchScript(const RunRequest& req, bool slurm_gpus = false);
  std::vector<std::string> SbatchArgs(const RunRequest& req) const;
  // The partition of `req`'s job: its class's (class_partition), else `partition`; "" for
  // Slurm's default. Its MaxTime caps --time.
  std::string PartitionOf(const RunRequest& req) const;
  // Reads the partitions' limits again when it is time to (see Start).
  void RefreshPartitions();

 private:
  Result<NativeState> ShowJob(const std::string& id);
  Result<std::map<std::string, NativeState>> Sacct(const std::vector<std::string>& ids);

  const SlurmOptions options_;
  std::atomic<bool> accounting_off_{false};  // sacct said so: scontrol only from then on
  mutable std::mutex partitions_mu_;
  SlurmPartitions partitions_;      // guarded by partitions_mu_
  int64_t partitions_next_ms_ = 0;  // steady clock; 0: never read; guarded by partitions_mu_
};

// "lh-<attempt id>".
std::string SlurmJobName(int64_t attempt_id);
// Slurm's job state word -> phase (PENDING -> kPending, RUNNING -> kRunning, COMPLETED,
// PREEMPTED, ... -> kEnded; unknown words -> kUnknown).
NativePhase SlurmPhase(const std::string& state);
// Parses `squeue -h -o '%i|%T|%r|%N'` lines (the node list is optional) into states by job
// id; lines that do not parse are skipped.
std::map<std::string, NativeState> ParseSqueue(const std::string& text);
// Parses `sacct -n -P -X -o JobID,State,NodeList,Reason` lines ("CANCELLED by 0" is
// CANCELLED, the node list "None assigned" is empty).
std::map<std::string, NativeState> ParseSacct(const std::string& text);
// Whether sacct's error output says the cluster keeps no accounting (AccountingStorageType=
// accounting_storage/none: "Slurm accounting storage is disabled"), so scontrol must answer.
bool SacctAccountingOff(const std::string& err);
// Whether a Slurm command's error output means it could not reach slurmctld ("Unable to
// contact slurm controller (connect failure)", "Socket timed out ..."): try again later.
bool SlurmUnreachable(const std::string& err);
// Of `squeue -h -o '%i|%Z'` lines, the id of the job whose working directory is `dir`; ""
// when none.
std::string JobInDir(const std::string& text, const std::string& dir);
// `sbatch --parsable` prints "ID" or "ID;CLUSTER".
Result<std::string> ParseSbatch(const std::string& text);

}  // namespace longhaul::agent

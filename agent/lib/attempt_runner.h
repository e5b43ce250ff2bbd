// How attempts are run: the seam between the agent's bookkeeping (attempt dirs, events, exits,
// the coordinator) and what actually starts the shim. Every runner starts the same command,
// `longhaul-shim --dir ATTEMPT_DIR ... -- ARGV`, so the stage protocol, logs and exit.json are
// the same whatever runs it:
//
//   LocalRunner   (local_runner.h)  a detached process on this node; native id = its pid. The
//                 agent watches it itself (pidfd), as it always has.
//   SlurmRunner   (slurm_runner.h)  one sbatch job per attempt; native id = the job id. The
//                 agent learns its state by polling (Reconcile, one squeue per tick).
//
// Runner methods may block (they run commands); the agent calls the ones that talk to a
// scheduler from a worker thread, never from its event loop. Implementations are thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/lib/process_launcher.h"
#include "core/status.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::agent {

struct RunRequest {
  int64_t attempt_id = 0;
  std::string attempt_dir;
  LaunchSpec shim;  // the shim's command line, environment and working directory
  v1::Resources resources;
  int64_t timeout_ms = 0;                  // the stage's wall-time limit; 0: none
  int64_t grace_ms = 0;                    // SIGTERM -> SIGKILL
  std::vector<std::string> exclude_nodes;  // nodes where earlier attempts failed (node_fail)
  std::string priority;  // the run's class: high, normal or low ("" from an older coordinator)
};

struct Started {
  std::string native_id;  // pid or job id, as text
  pid_t pid = 0;          // set when the runner made a child of the agent (it must be reaped)
};

enum class NativePhase {
  kUnknown,  // not known this time (the query failed, or did not list it): ask again later
  kPending,  // queued: `reason` says why it waits
  kRunning,  // the executor runs it (the shim may still be starting)
  kEnded,    // over; `state` is final
  kGone,     // the executor no longer knows it
};

struct NativeState {
  NativePhase phase = NativePhase::kUnknown;
  std::string state;   // the executor's own word: PENDING, RUNNING, PREEMPTED, ...
  std::string reason;  // why it is pending (Resources, Priority, ...), or how it ended
  std::string node;    // where it runs or ran (Slurm's node list), "" when not known
};

class AttemptRunner {
 public:
  virtual ~AttemptRunner() = default;

  // "local" or "slurm": Hello's executor.
  virtual std::string executor() const = 0;
  // True when the agent watches the shim's process itself (pidfd, waitpid); false when the
  // runner reports states through Reconcile.
  virtual bool watches_processes() const = 0;

  // Starts the attempt. Errors that mean "maybe started" (a timeout) are DeadlineExceeded:
  // the caller then asks Find before starting again.
  virtual Result<Started> Start(const RunRequest& req) = 0;
  // An attempt started earlier (by an earlier agent, or a Start that timed out): its native
  // id, or NotFound. `attempt_dir` tells it from another attempt of the same id (another
  // coordinator's, or one of a coordinator whose database was replaced).
  virtual Result<std::string> Find(int64_t attempt_id, const std::string& attempt_dir) = 0;
  // Asks the attempt to stop. `running`: the shim runs and gets the cancel signal (it reads
  // cancel.json and stops the stage with its grace); otherwise it is taken off the queue.
  virtual Status Cancel(const std::string& native_id, bool running) = 0;
  // Cancel for many at once, in as few commands as the executor allows (the first error).
  virtual Status CancelMany(const std::vector<std::string>& native_ids, bool running) {
    Status first;
    for (const auto& id : native_ids) {
      if (Status s = Cancel(id, running); !s.ok() && first.ok()) first = s;
    }
    return first;
  }
  // The state of each of `native_ids`, in as few queries as the executor allows. An error
  // means nothing is known this time; ids missing from the answer are unknown.
  virtual Result<std::map<std::string, NativeState>> Reconcile(
      const std::vector<std::string>& native_ids) = 0;
};

}  // namespace longhaul::agent

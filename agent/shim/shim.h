// longhaul-shim: runs one attempt's stage detached from the agent (docs/architecture.md,
// "The shim"). Plain POSIX and libstdc++ only, so it starts in well under a millisecond.
//
//   longhaul-shim --dir ATTEMPT_DIR [--grace-ms N] [--cgroup DIR] -- PROGRAM ARGS...
//
// With --cgroup, the stage runs in the cgroup (v2) DIR, made if missing, and at its end the
// shim kills everything in it and removes it (attempt_cgroup.h); where DIR cannot be made or
// opened the shim says so in stderr.log and finds leftovers through /proc alone.
//
// Files in ATTEMPT_DIR: it appends the stage's output to stdout.log / stderr.log, writes
// pid.json once the stage runs and exit.json (atomically) when the stage has ended, reads
// cancel.json on SIGTERM/SIGINT/SIGHUP/SIGUSR1 (USR1: how Slurm warns of its time limit and how the
// agent cancels a Slurm job; never passed on to the stage), and holds an exclusive flock on
// ATTEMPT_DIR itself for its whole life, so that two shims never run the same attempt and the agent
// can tell a shim that is still starting from one that never ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace longhaul::shim {

struct ShimOptions {
  std::string dir;
  int64_t grace_ms = 10'000;  // SIGTERM -> SIGKILL, unless cancel.json says otherwise
  std::string cgroup;         // the attempt's cgroup directory; empty: none
  std::vector<std::string> argv;
};

// Parses the command line (without argv[0]). On error returns false and sets `error`.
bool ParseShimArgs(const std::vector<std::string>& args, ShimOptions* opts, std::string* error);

// exit.json's reason when SIGUSR1 came without a cancel.json: Slurm's warning before the
// job's time limit (sbatch --signal=B:USR1@lead), docs/slurm.md.
inline constexpr char kTimeLimitReason[] = "time limit near: SIGUSR1 from Slurm";

// exit.json's bytes, reserved before the stage starts so that a stage that fills the disk
// cannot cost the record of how it ended (docs/agent.md, "The exit record"): one block of
// most file systems. A reason is cut to kMaxExitReasonBytes, which keeps the largest record
// (every byte a control character, six bytes escaped) inside the reservation.
inline constexpr int64_t kExitRecordReserve = 4096;
inline constexpr size_t kMaxExitReasonBytes = 512;

// exit.json's text: one JSON object and a newline; `reason` cut to kMaxExitReasonBytes.
// `leftovers_killed` (written only when > 0): processes of the attempt still alive after its
// main process ended, which the shim killed (leftovers.h). `memory_peak_bytes` and `cpu_usec`
// (written only when >= 0): what the attempt's cgroup measured (attempt_cgroup.h).
std::string ExitRecordJson(int exit_code, int signal, int64_t ended_at_ms,
                           const std::string& reason, bool start_failed, int leftovers_killed = 0,
                           int64_t memory_peak_bytes = -1, int64_t cpu_usec = -1);

// Exit codes of the shim itself when it cannot do its job at all.
constexpr int kShimUsage = 64;    // bad command line; nothing written
constexpr int kShimRefused = 75;  // another shim holds the attempt, or it already ended

// Runs the attempt to its end and returns the stage's exit code (128+N for signal N; 127 when
// it could not start). Forks; blocks SIGCHLD/SIGTERM/SIGINT/SIGHUP in the calling process.
int RunShim(const ShimOptions& opts);

}  // namespace longhaul::shim

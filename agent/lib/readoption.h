// What the agent does, at start-up, with each attempt directory it finds without `done`
// (docs/agent.md, "Re-adoption"). ProbeAttempt looks at the files and /proc; DecideAdoption is
// a pure function of what was seen, so every case is unit-tested.
#pragma once

#include <optional>
#include <string>

#include "agent/lib/attempt_dir.h"

namespace longhaul::agent {

struct AttemptProbe {
  bool done = false;
  std::optional<ExitInfo> exit;  // exit.json, when present and readable
  std::string exit_error;        // exit.json present but unreadable
  std::optional<PidInfo> pid;    // pid.json, when present and readable
  bool shim_alive = false;       // pid.json's shim pid runs with the recorded start time
  bool stage_alive = false;      // same for the stage
  bool shim_lock_held = false;   // a shim holds the dir's lock (it is starting or running)
};

enum class Adoption {
  kIgnore,        // `done`: the coordinator has the exit already
  kReportExit,    // exit.json: report it (after the remaining events)
  kAdoptShim,     // the shim runs: watch it as if we had started it
  kAdoptStage,    // the shim died but the stage runs: watch the stage; exit status unknown
  kShimDied,      // neither runs and there is no exit.json: exit status unknown
  kWaitForShim,   // no pid.json yet, but a shim holds the lock: it is still starting
  kNeverStarted,  // nothing ran: report start_failed
};

const char* AdoptionName(Adoption a);

Adoption DecideAdoption(const AttemptProbe& probe);

// Reads the attempt's files and checks /proc. For an attempt with neither pid.json nor
// exit.json it tries the shim's lock (a flock on the attempt directory); if it gets the lock
// it keeps holding it in `*lock_fd` (so that no shim can start the stage while the agent
// declares it never started); the caller closes it. `*lock_fd` is -1 otherwise. An attempt
// that is `done` is only marked so, unless `even_if_done` (a StartAttempt for it came again):
// then its files are read as for any other.
AttemptProbe ProbeAttempt(const AttemptDir& dir, int* lock_fd, bool even_if_done = false);

// The exit recorded for the outcomes that have no exit.json of the shim's: exit code -1.
ExitInfo UnknownExit(const std::string& reason, int64_t now_ms, bool start_failed);

// A stage the agent could not start (exit code 127, as the shim's exec failures).
ExitInfo StartFailure(std::string reason, int64_t now_ms);

inline constexpr char kNeverStartedReason[] = "agent restarted before the stage started";
inline constexpr char kShimDiedReason[] =
    "exit status unknown: longhaul-shim died before the stage ended";

}  // namespace longhaul::agent

// How an attempt run by a polled executor (Slurm) ended, from what the agent has seen: the
// shim's exit.json, the executor's state, and whether longhaul asked it to stop. A pure
// function, so that every case is unit-tested (docs/slurm.md, "States").
//
// exit.json decides the exit code and signal when it exists. The executor's final state
// decides the failure kind when the executor, not longhaul and not the stage, ended it:
//
//   PREEMPTED -> preempted, NODE_FAIL -> node_fail, OUT_OF_MEMORY -> oom,
//   TIMEOUT/DEADLINE (or the shim's "time limit near" stop) -> timeout,
//   CANCELLED with no cancel from longhaul -> cancelled_outside ("cancelled outside longhaul")
//
// A job still queued for a reason that never clears by itself (SlurmReasonNeverClears) fails
// to start at once, with that reason; the caller then takes the job off the queue.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agent/lib/attempt_dir.h"
#include "agent/lib/attempt_runner.h"

namespace longhaul::agent {

// How long an ambiguous picture may last before the agent reports with what it has: a job
// over without exit.json (the file may still be on its way over a shared file system), or an
// exit.json from a stop the shim did not get from longhaul while the job is not over yet.
inline constexpr int64_t kNativeSettleMs = 5'000;
inline constexpr int64_t kNativeFinalStateWaitMs = 30'000;

struct NativeOutcomeInput {
  std::string native_id;
  NativeState state;                  // the latest known; kUnknown when none
  std::optional<ExitInfo> shim_exit;  // exit.json
  std::optional<CancelInfo> cancel;   // longhaul asked it to stop
  bool stage_started = false;         // pid.json was seen
  int64_t ambiguous_for_ms = 0;       // how long the picture has been as it is (see above)
  int64_t now_ms = 0;
};

// Whether a pending job's reason (squeue's %r) means it will never run as submitted:
// PartitionTimeLimit, PartitionNodeLimit, BadConstraints, InvalidAccount, InvalidQOS,
// QOSMaxWallDurationPerJobLimit. Resources, Priority, ReqNodeNotAvail (a node may come back),
// Dependency, ... clear by themselves.
bool SlurmReasonNeverClears(const std::string& reason);

// The exit to report, or nullopt while the agent should wait for more.
std::optional<ExitInfo> DecideNativeExit(const NativeOutcomeInput& in);

}  // namespace longhaul::agent

// One attempt's directory under STATE/attempts/ID/ (docs/architecture.md, "The agent's state
// directory"): its paths, and the JSON files the agent and the shim exchange.
//
// Reads return NotFound when the file is absent and InvalidArgument (naming the file) when it
// cannot be parsed; ReadExit returns DataLoss "exit.json empty (disk full?)" for an empty
// exit.json and "exit.json unreadable: ..." when it cannot be read; the agent reports either
// as the reason "exit status unknown: " + that message. Writes are atomic (temp file + rename) and
// none is fsynced: each file's loss in a crash of the node is harmless (docs/architecture.md,
// "Durability of the agent's files"). Not thread-safe; cheap to copy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/status.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

struct PidInfo {
  pid_t shim_pid = 0;
  int64_t shim_start = 0;
  pid_t stage_pid = 0;
  int64_t stage_start = 0;
  int64_t started_at_ms = 0;
  std::string cgroup;  // the attempt's cgroup when the stage runs in one (cgroup.h)
};

struct ExitInfo {
  int exit_code = 0;
  int signal = 0;
  int64_t ended_at_ms = 0;
  std::string reason;
  bool start_failed = false;
  // Set when the executor, not the stage, ended it: preempted, node_fail, oom, timeout,
  // cancelled_outside (native_outcome.h). Empty otherwise.
  std::string failure_kind;
  // With failure_kind: the node the executor ran it on, when known ("" otherwise).
  std::string node;
  // Processes the shim killed because they outlived the stage's main process (0: none).
  int leftovers_killed = 0;
};

struct CancelInfo {
  std::string reason;
  int64_t grace_ms = 0;
};

// How far the coordinator has acknowledged events: every line before `offset` is acknowledged,
// and `seq` is the line number of the line that ends at `offset` (0 at offset 0).
struct AckHint {
  int64_t seq = 0;
  int64_t offset = 0;
};

class AttemptDir {
 public:
  AttemptDir() = default;
  AttemptDir(const std::string& state_dir, int64_t attempt_id);

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  std::string events_path() const { return File("events.jsonl"); }
  std::string work_dir() const { return File("work"); }
  // Lines from longhaul to the stage ($LONGHAUL_CONTROL), one JSON object each, appended.
  std::string control_path() const { return File("control.jsonl"); }
  std::string log_path(const std::string& stream) const { return File(stream + ".log"); }

  bool Exists() const;
  bool IsDone() const;
  Status MarkDone() const;

  Status WriteSpec(const v1::StartAttempt& spec) const;
  Result<v1::StartAttempt> ReadSpec() const;
  Result<PidInfo> ReadPid() const;
  Result<ExitInfo> ReadExit() const;
  Status WriteExit(const ExitInfo& exit) const;
  Status WriteCancel(const CancelInfo& cancel) const;
  // Appends `line` (one JSON object, no newline) and a newline to control_path(), in one write.
  Status AppendControl(const std::string& line) const;
  // job_id: the native id of an attempt run by a polled executor (a Slurm job id), written by
  // the runner as soon as it is known.
  Result<std::string> ReadJobId() const;
  Result<AckHint> ReadAckHint() const;
  Status WriteAckHint(const AckHint& hint) const;  // a hint only

 private:
  std::string path_;
};

// Field 22 of /proc/PID/stat (start time since boot, in clock ticks). NotFound if there is no
// such process or it is a zombie.
Result<int64_t> ProcessStartTime(pid_t pid);

// True if `pid` is a live (not zombie) process whose start time is `start`: the same process
// that was recorded, not a later one that re-used the pid.
bool ProcessMatches(pid_t pid, int64_t start);

}  // namespace longhaul::agent

#include "agent/lib/readoption.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {

const char* AdoptionName(Adoption a) {
  switch (a) {
    case Adoption::kIgnore:
      return "done";
    case Adoption::kReportExit:
      return "exited";
    case Adoption::kAdoptShim:
      return "running";
    case Adoption::kAdoptStage:
      return "running without its shim";
    case Adoption::kShimDied:
      return "shim died";
    case Adoption::kWaitForShim:
      return "starting";
    case Adoption::kNeverStarted:
      return "never started";
  }
  return "?";
}

Adoption DecideAdoption(const AttemptProbe& p) {
  if (p.done) return Adoption::kIgnore;
  if (p.exit) return Adoption::kReportExit;
  if (p.pid) {
    if (p.shim_alive) return Adoption::kAdoptShim;
    if (p.stage_alive) return Adoption::kAdoptStage;
    return Adoption::kShimDied;
  }
  // An unreadable exit.json still means the attempt ended; its status is lost.
  if (!p.exit_error.empty()) return Adoption::kShimDied;
  return p.shim_lock_held ? Adoption::kWaitForShim : Adoption::kNeverStarted;
}

AttemptProbe ProbeAttempt(const AttemptDir& dir, int* lock_fd, bool even_if_done) {
  *lock_fd = -1;
  AttemptProbe p;
  p.done = dir.IsDone();
  if (p.done && !even_if_done) return p;
  auto pid = dir.ReadPid();
  if (pid.ok()) {
    p.pid = *pid;
    p.shim_alive = ProcessMatches(pid->shim_pid, pid->shim_start);
    p.stage_alive = ProcessMatches(pid->stage_pid, pid->stage_start);
  }
  // Read after the liveness checks: a shim that ends in between has written exit.json first.
  auto exit = dir.ReadExit();
  if (exit.ok()) {
    p.exit = *exit;
  } else if (!absl::IsNotFound(exit.status())) {
    p.exit_error = ToStd(exit.status().message());
  }
  if (p.pid || p.exit || !p.exit_error.empty()) return p;
  // A shim locks the attempt directory. One of an earlier version locked shim.lock instead:
  // it is only tested, not held, so it must be as far as pid.json by the time we look again.
  int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int legacy = ::open(dir.File("shim.lock").c_str(), O_RDONLY | O_CLOEXEC);
  bool legacy_held = legacy >= 0 && ::flock(legacy, LOCK_EX | LOCK_NB) != 0;
  if (legacy >= 0) ::close(legacy);
  if (legacy_held || (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0)) {
    p.shim_lock_held = true;
    if (fd >= 0) ::close(fd);
    return p;
  }
  // The lock is ours, but a shim may have finished between our reads and the lock.
  if (dir.ReadPid().ok() || PathExists(dir.File("exit.json"))) {
    if (fd >= 0) ::close(fd);
    return ProbeAttempt(dir, lock_fd, even_if_done);
  }
  *lock_fd = fd;
  return p;
}

ExitInfo UnknownExit(const std::string& reason, int64_t now_ms, bool start_failed) {
  ExitInfo e;
  e.exit_code = -1;
  e.reason = reason;
  e.ended_at_ms = now_ms;
  e.start_failed = start_failed;
  return e;
}

ExitInfo StartFailure(std::string reason, int64_t now_ms) {
  ExitInfo e;
  e.exit_code = 127;
  e.reason = std::move(reason);
  e.ended_at_ms = now_ms;
  e.start_failed = true;
  return e;
}

}  // namespace longhaul::agent

// Agent: watching shims, stages and attempt files, and recording how attempts end.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "agent/lib/agent.h"
#include "agent/lib/cgroup.h"
#include "agent/lib/pidfd.h"
#include "agent/lib/readoption.h"
#include "agent/shim/attempt_cgroup.h"
#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {

namespace {

// How long the sweep of a dead shim's cgroup waits for it to empty (it blocks the loop; the
// kernel's cgroup.kill takes milliseconds).
constexpr int64_t kCgroupSweepWaitMs = 2000;

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) return StrCat("killed by signal ", WTERMSIG(status));
  if (WIFEXITED(status)) return StrCat("exited with ", WEXITSTATUS(status));
  return StrCat("status ", status);
}

}  // namespace

Status Agent::WatchPid(Attempt& a, pid_t pid, bool is_shim) {
  int fd = PidfdOpen(pid);
  if (fd < 0) return ErrnoStatus("pidfd_open", std::to_string(pid), errno);
  a.watched = std::make_unique<boost::asio::posix::stream_descriptor>(io_, fd);
  a.watching_stage = !is_shim;
  auto* raw = a.watched.get();
  a.watched->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                        [this, id = a.id, raw](const boost::system::error_code& ec) {
                          if (ec) return;  // closed: the attempt was forgotten
                          Attempt* at = Find(id);
                          if (at == nullptr || at->watched.get() != raw) return;
                          OnWatchedExit(*at);
                        });
  return OkStatus();
}

void Agent::OnWatchedExit(Attempt& a) {
  if (a.watching_stage) {
    OnStageGone(a);
    return;
  }
  std::optional<int> status;
  if (a.shim_is_child) {
    int st = 0;
    if (::waitpid(a.shim_pid, &st, WNOHANG) == a.shim_pid) status = st;
  }
  OnShimGone(a, status);
}

void Agent::OnShimGone(Attempt& a, std::optional<int> wait_status) {
  a.watched.reset();
  a.shim_is_child = false;  // reaped (or not ours)
  CheckPidFile(a);
  auto exit = a.dir.ReadExit();
  if (exit.ok()) {
    RecordExit(a, *exit, /*write_file=*/false);
  } else if (!absl::IsNotFound(exit.status())) {
    RecordExit(a,
               UnknownExit(StrCat("exit status unknown: ", ToStd(exit.status().message())),
                           clock_->NowMs(), false),
               /*write_file=*/true);
  } else if (a.pid && ProcessMatches(a.pid->stage_pid, a.pid->stage_start) &&
             WatchPid(a, a.pid->stage_pid, /*is_shim=*/false).ok()) {
    log_->warn("attempt {}: longhaul-shim died; watching the stage (pid {}) directly", a.id,
               a.pid->stage_pid);
    if (a.cancel) SignalStageGroup(a, SIGTERM);
    return;
  } else {
    std::string how = wait_status ? StrCat(" (", DescribeWaitStatus(*wait_status), ")") : "";
    if (a.pid) {
      RecordExit(a, UnknownExit(StrCat(kShimDiedReason, how), clock_->NowMs(), false), true);
    } else {
      std::string reason =
          a.cancel ? a.cancel->reason : StrCat("longhaul-shim ended before the stage started", how);
      RecordExit(a, StartFailure(reason, clock_->NowMs()), /*write_file=*/true);
    }
  }
  Pump(a);
}

void Agent::OnStageGone(Attempt& a) {
  a.watched.reset();
  a.kill_timer.cancel();
  if (a.pid) {
    // Nothing of the stage's group may outlive it; the shim would have seen to that.
    ::kill(-a.pid->stage_pid, SIGKILL);
  }
  auto exit = a.dir.ReadExit();  // a shim can no longer write it, but be exact if it did
  RecordExit(a,
             exit.ok() ? *exit
                       : UnknownExit(a.cancel ? a.cancel->reason : std::string(kShimDiedReason),
                                     clock_->NowMs(), false),
             /*write_file=*/!exit.ok());
  Pump(a);
}

void Agent::CheckPidFile(Attempt& a) {
  if (a.pid) return;
  auto pid = a.dir.ReadPid();
  if (!pid.ok()) return;
  a.pid = *pid;
  metrics_.attempts_started.fetch_add(1, std::memory_order_relaxed);
  PublishGauges();
  ReportStarted(a);
  executor_->OnStarted(a);
}

void Agent::OnWatchedStarted(Attempt& a) {
  if (a.shim_pid == 0 && !a.exit) {
    // Re-adopted while the shim was starting: now we know whom to watch.
    a.shim_pid = a.pid->shim_pid;
    if (!WatchPid(a, a.shim_pid, true).ok() || !ProcessMatches(a.shim_pid, a.pid->shim_start)) {
      OnShimGone(a, std::nullopt);
      return;
    }
  }
  if (a.cancel && !a.cancel_signalled && !a.exit) SignalShim(a);
}

void Agent::CheckProgress(Attempt& a) {
  CheckPidFile(a);
  if (a.exit) return;
  if (!a.watched) {
    if (a.shim_is_child) {
      int st = 0;
      if (::waitpid(a.shim_pid, &st, WNOHANG) == a.shim_pid) OnShimGone(a, st);
    } else if (a.shim_pid == 0) {
      // Waiting for a shim that held the lock at start-up; it may have died silently.
      int lock_fd = -1;
      AttemptProbe probe = ProbeAttempt(a.dir, &lock_fd);
      Adoption d = DecideAdoption(probe);
      if (d == Adoption::kNeverStarted) {
        RecordExit(a, UnknownExit(kNeverStartedReason, clock_->NowMs(), true), true);
      } else if (d == Adoption::kReportExit) {
        RecordExit(a, *probe.exit, false);
      }
      if (lock_fd >= 0) ::close(lock_fd);
    }
  }
  Pump(a);
}

void Agent::ReportStarted(Attempt& a) {
  if (!a.pid) return;
  auto it = start_received_ms_.find(a.id);
  if (it != start_received_ms_.end()) {
    log_->debug("attempt {}: running {} ms after StartAttempt", a.id, clock_->NowMs() - it->second);
    start_received_ms_.erase(it);
  }
  v1::AgentMessage m;
  m.mutable_started()->set_attempt_id(a.id);
  m.mutable_started()->set_pid(a.pid->stage_pid);
  m.mutable_started()->set_started_at_ms(a.pid->started_at_ms);
  if (a.environment) *m.mutable_started()->mutable_environment() = *a.environment;
  Send(std::move(m));
}

int Agent::SweepCgroup(Attempt& a) {
  std::string name = AttemptCgroupName(a.id, a.dir.path());
  std::string dir = a.pid ? a.pid->cgroup : "";
  // pid.json is in reach of the stage: only a cgroup of this attempt's name is killed.
  if (!dir.empty() && !EndsWith(dir, "/" + name)) {
    log_->warn("attempt {}: pid.json names cgroup {}, not this attempt's {}; not swept", a.id, dir,
               name);
    dir.clear();
  }
  if (dir.empty() && !config_.cgroup_parent.empty()) {
    // No pid.json: a shim that died before writing it may have had the stage in its cgroup.
    dir = StrCat(config_.cgroup_parent, "/", name);
  }
  if (dir.empty() || !PathExists(dir)) return 0;
  std::string error;
  int killed = shim::KillCgroup(
      dir, kCgroupSweepWaitMs, [] {}, nullptr, &error);
  if (!error.empty()) log_->warn("attempt {}: {}", a.id, error);
  if (killed > 0)
    log_->warn("attempt {}: killed {} left in its cgroup {}", a.id,
               killed == 1 ? "1 process" : StrCat(killed, " processes"), dir);
  return std::max(killed, 0);
}

void Agent::RecordExit(Attempt& a, ExitInfo exit, bool write_file) {
  if (a.exit) return;
  // Nothing of an ended attempt outlives it; the shim sees to that unless it died, and then
  // what it left counts as the shim's count would have.
  int swept = executor_->Sweep(a);
  if (write_file) exit.leftovers_killed += swept;
  if (write_file) {
    if (Status s = a.dir.WriteExit(exit); !s.ok()) {
      NoteWriteFailure(s);
      log_->error("attempt {}: {} (the exit is kept in memory until acknowledged)", a.id,
                  ToStd(s.message()));
    }
  }
  log_->info("attempt {}: ended: exit {} signal {}{}{}", a.id, exit.exit_code, exit.signal,
             exit.reason.empty() ? "" : ": ", exit.reason);
  a.exit = std::move(exit);
  a.kill_timer.cancel();
  start_received_ms_.erase(a.id);
  metrics_.attempts_exited.fetch_add(1, std::memory_order_relaxed);
  PublishGauges();
}

void Agent::WatchFiles(Attempt& a) {
  auto wd = inotify_.Add(a.dir.path(), IN_MOVED_TO | IN_CREATE | IN_ONLYDIR, a.id);
  if (wd.ok()) a.wd_dir = *wd;
  auto we = inotify_.Add(a.dir.events_path(), IN_MODIFY, a.id);
  if (we.ok()) a.wd_events = *we;
  if (!wd.ok() || !we.ok()) {
    // Without inotify the heartbeat still reads the file once a second.
    log_->warn("attempt {}: {}", a.id, ToStd((!wd.ok() ? wd.status() : we.status()).message()));
  }
}

void Agent::OnFileEvent(int64_t key, const std::string& name) {
  if (key == InotifyWatcher::kOverflowKey) {
    for (auto& [id, a] : attempts_) CheckPidFile(*a);
    PumpAll();
    return;
  }
  Attempt* a = Find(key);
  if (a == nullptr) return;
  if (name == "pid.json") {
    CheckPidFile(*a);
  } else if (name == "exit.json") {
    executor_->OnExitFile(*a);
  } else if (name.empty()) {
    Pump(*a);
  }
}

void Agent::Forget(int64_t id) {
  Attempt* a = Find(id);
  if (a == nullptr) return;
  if (a->wd_dir >= 0) inotify_.Remove(a->wd_dir);
  if (a->wd_events >= 0) inotify_.Remove(a->wd_events);
  in_flight_ -= static_cast<int64_t>(a->in_flight.size());
  attempts_.erase(id);
}

}  // namespace longhaul::agent

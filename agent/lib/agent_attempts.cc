// Agent: starting, re-adopting, watching, cancelling and ending attempts.
#include <fcntl.h>
#include <signal.h>
#include "agent/lib/pidfd.h"
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "agent/lib/agent.h"
#include "agent/lib/readoption.h"
#include "core/fs.h"
#include "core/strings.h"

extern char** environ;

namespace longhaul::agent {
namespace {

constexpr int kCannotStart = 127;

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) return StrCat("killed by signal ", WTERMSIG(status));
  if (WIFEXITED(status)) return StrCat("exited with ", WEXITSTATUS(status));
  return StrCat("status ", status);
}

ExitInfo StartFailure(std::string reason, int64_t now_ms) {
  ExitInfo e;
  e.exit_code = kCannotStart;
  e.reason = std::move(reason);
  e.ended_at_ms = now_ms;
  e.start_failed = true;
  return e;
}

Status TouchFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", path, errno);
  ::close(fd);
  return OkStatus();
}

}  // namespace

void Agent::HandleStart(const v1::StartAttempt& spec) {
  int64_t id = spec.attempt_id();
  if (id <= 0) {
    log_->error("StartAttempt without an attempt id; ignored");
    return;
  }
  start_received_ms_[id] = clock_->NowMs();
  if (Attempt* a = Find(id)) {
    // Idempotent: report what we know again, start nothing.
    log_->info("attempt {} is already here; reporting its state again", id);
    if (a->pid) ReportStarted(*a);
    a->exit_sent = false;
    Pump(*a);
    return;
  }
  AttemptDir dir(config_.state_dir, id);
  if (dir.Exists()) {
    // Known from an earlier life of this agent (done, or left unusable): never run it twice.
    log_->warn("attempt {} has a directory already ({}); reporting it, not starting it", id,
               dir.path());
    Adopt(id, dir, /*even_if_done=*/true);
    return;
  }
  auto owned = std::make_unique<Attempt>(io_, id, dir);
  Attempt& a = *owned;
  attempts_[id] = std::move(owned);
  Launch(a, spec);
  Pump(a);
}

void Agent::Launch(Attempt& a, const v1::StartAttempt& spec) {
  auto fail = [&](const Status& s) {
    log_->error("attempt {}: {}", a.id, ToStd(s.message()));
    RecordExit(a, StartFailure(ToStd(s.message()), clock_->NowMs()), /*write_file=*/true);
  };
  std::string out_dir = spec.output_dir();
  if (out_dir.empty()) {
    out_dir = StrCat(config_.data_dir, "/runs/", spec.run_id(), "/", spec.stage());
    if (!spec.resume()) out_dir += StrCat("/attempt-", spec.attempt());
  }
  if (Status s = MakeDirs(a.dir.work_dir()); !s.ok()) {
    return fail(Annotate(s, "cannot create the attempt's directory"));
  }
  if (Status s = a.dir.WriteSpec(spec); !s.ok()) return fail(s);
  if (Status s = MakeDirs(out_dir); !s.ok()) {
    return fail(Annotate(s, "cannot create the output dir"));
  }
  if (Status s = TouchFile(a.dir.events_path()); !s.ok()) return fail(s);
  WatchFiles(a);
  if (spec.argv_size() == 0 || spec.argv(0).empty()) {
    return fail(absl::InvalidArgumentError("the stage's argv is empty"));
  }
  LaunchSpec ls;
  ls.program = config_.shim_path;
  int64_t grace = spec.grace_ms() > 0 ? spec.grace_ms() : config_.default_grace_ms;
  ls.args = {"--dir", a.dir.path(), "--grace-ms", std::to_string(grace), "--"};
  ls.args.insert(ls.args.end(), spec.argv().begin(), spec.argv().end());
  ls.env = StageEnv(spec, out_dir, a.dir);
  ls.cwd = a.dir.path();
  auto pid = launcher_->Launch(ls);
  if (!pid.ok()) return fail(pid.status());
  a.shim_pid = *pid;
  a.shim_is_child = true;
  log_->info("attempt {}: started {} (shim pid {})", a.id, spec.argv(0), *pid);
  if (Status s = WatchPid(a, *pid, /*is_shim=*/true); !s.ok()) {
    // Unlikely (out of descriptors); the heartbeat's waitpid check still notices the end.
    log_->error("attempt {}: cannot watch the shim: {}", a.id, ToStd(s.message()));
  }
  CheckPidFile(a);
}

std::vector<std::string> Agent::StageEnv(const v1::StartAttempt& spec,
                                         const std::string& out_dir, const AttemptDir& dir) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env[std::string(kv.substr(0, eq))] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : spec.env()) env[k] = v;
  env["LONGHAUL_EVENTS"] = dir.events_path();
  env["LONGHAUL_OUTPUT_DIR"] = out_dir;
  env["LONGHAUL_WORK_DIR"] = dir.work_dir();
  env["LONGHAUL_RESUME"] = spec.resume() ? "1" : "0";
  if (spec.checkpoint().empty()) {
    env.erase("LONGHAUL_CHECKPOINT");
  } else {
    env["LONGHAUL_CHECKPOINT"] = spec.checkpoint();
  }
  env["LONGHAUL_RUN_ID"] = std::to_string(spec.run_id());
  env["LONGHAUL_STAGE"] = spec.stage();
  env["LONGHAUL_ATTEMPT"] = std::to_string(spec.attempt());
  if (spec.gpus_size() > 0) {
    std::vector<std::string> ids;
    for (int g : spec.gpus()) ids.push_back(std::to_string(g));
    env["CUDA_VISIBLE_DEVICES"] = StrJoin(ids, ",");
  } else if (config_.resources.gpus() > 0) {
    env["CUDA_VISIBLE_DEVICES"] = "";  // a stage given no GPU must not grab them all
  }
  auto path = env.find("PATH");
  std::string base = path != env.end() ? path->second : "/usr/local/bin:/usr/bin:/bin";
  env["PATH"] = config_.bin_dir.empty() ? base : StrCat(config_.bin_dir, ":", base);
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(StrCat(k, "=", v));
  return out;
}

void Agent::Adopt(int64_t id, const AttemptDir& dir, bool even_if_done) {
  int lock_fd = -1;
  AttemptProbe probe = ProbeAttempt(dir, &lock_fd);
  if (even_if_done) probe.done = false;
  Adoption decision = DecideAdoption(probe);
  if (decision == Adoption::kIgnore) return;
  auto owned = std::make_unique<Attempt>(io_, id, dir);
  Attempt& a = *owned;
  attempts_[id] = std::move(owned);
  log_->info("attempt {}: found in the state dir: {}", id, AdoptionName(decision));
  if (auto hint = dir.ReadAckHint(); hint.ok() && ValidHint(dir, *hint)) {
    a.pos_offset = hint->offset;
    a.pos_seq = a.acked_seq = a.last_event_seq = a.saved_hint_seq = hint->seq;
    a.tailer.Rewind(hint->offset, hint->seq);
  }
  if (Status s = TouchFile(dir.events_path()); !s.ok()) log_->warn("attempt {}: {}", id, ToStd(s.message()));
  WatchFiles(a);
  a.pid = probe.pid;
  a.started_reported = probe.pid.has_value();
  switch (decision) {
    case Adoption::kReportExit:
      RecordExit(a, *probe.exit, /*write_file=*/false);
      break;
    case Adoption::kAdoptShim:
      a.shim_pid = probe.pid->shim_pid;
      // pidfd first, then the start time: a pid re-used in between is caught either way.
      if (!WatchPid(a, a.shim_pid, /*is_shim=*/true).ok() ||
          !ProcessMatches(a.shim_pid, probe.pid->shim_start)) {
        OnShimGone(a, std::nullopt);
      }
      break;
    case Adoption::kAdoptStage:
      if (!WatchPid(a, probe.pid->stage_pid, /*is_shim=*/false).ok() ||
          !ProcessMatches(probe.pid->stage_pid, probe.pid->stage_start)) {
        OnStageGone(a);
      }
      break;
    case Adoption::kShimDied:
      RecordExit(a,
                 UnknownExit(probe.exit_error.empty()
                                 ? std::string(kShimDiedReason)
                                 : StrCat("exit status unknown: ", probe.exit_error),
                             clock_->NowMs(), /*start_failed=*/false),
                 /*write_file=*/true);
      break;
    case Adoption::kWaitForShim:
      break;  // pid.json or exit.json will appear; the heartbeat also checks
    case Adoption::kNeverStarted:
      // Written while holding shim.lock, so a shim still being exec'd will refuse to run.
      RecordExit(a, UnknownExit(kNeverStartedReason, clock_->NowMs(), /*start_failed=*/true),
                 /*write_file=*/true);
      break;
    case Adoption::kIgnore:
      break;
  }
  if (lock_fd >= 0) ::close(lock_fd);
  Pump(a);
}

bool Agent::ValidHint(const AttemptDir& dir, const AckHint& hint) {
  if (hint.offset == 0) return hint.seq == 0;
  // The hint must end a line of the file as it is now, or it is not trusted.
  int fd = ::open(dir.events_path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char c = 0;
  bool ok = ::pread(fd, &c, 1, hint.offset - 1) == 1 && c == '\n';
  ::close(fd);
  return ok;
}

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
    RecordExit(a, UnknownExit(StrCat("exit status unknown: ", ToStd(exit.status().message())),
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
      std::string reason = a.cancel ? a.cancel->reason
                                    : StrCat("longhaul-shim ended before the stage started", how);
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
  ReportStarted(a);
  if (a.shim_pid == 0 && !a.exit) {
    // Re-adopted while the shim was starting: now we know whom to watch.
    a.shim_pid = pid->shim_pid;
    if (!WatchPid(a, a.shim_pid, true).ok() || !ProcessMatches(a.shim_pid, pid->shim_start)) {
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
  a.started_reported = true;
  auto it = start_received_ms_.find(a.id);
  if (it != start_received_ms_.end()) {
    log_->debug("attempt {}: running {} ms after StartAttempt", a.id,
                clock_->NowMs() - it->second);
    start_received_ms_.erase(it);
  }
  v1::AgentMessage m;
  m.mutable_started()->set_attempt_id(a.id);
  m.mutable_started()->set_pid(a.pid->stage_pid);
  m.mutable_started()->set_started_at_ms(a.pid->started_at_ms);
  Send(std::move(m));
}

void Agent::RecordExit(Attempt& a, ExitInfo exit, bool write_file) {
  if (a.exit) return;
  if (write_file) {
    if (Status s = a.dir.WriteExit(exit); !s.ok()) {
      log_->error("attempt {}: {} (the exit is kept in memory until acknowledged)", a.id,
                  ToStd(s.message()));
    }
  }
  log_->info("attempt {}: ended: exit {} signal {}{}{}", a.id, exit.exit_code, exit.signal,
             exit.reason.empty() ? "" : ": ", exit.reason);
  a.exit = std::move(exit);
  a.kill_timer.cancel();
  start_received_ms_.erase(a.id);
}

void Agent::HandleCancel(const v1::CancelAttempt& cancel) {
  Attempt* a = Find(cancel.attempt_id());
  if (a == nullptr) {
    log_->info("cancel for attempt {}, which this agent does not run; nothing to do",
               cancel.attempt_id());
    return;
  }
  if (a->exit) return;  // ended already; its exit report stands
  CancelInfo c;
  c.reason = cancel.reason().empty() ? "cancelled" : cancel.reason();
  c.grace_ms = cancel.grace_ms() > 0 ? cancel.grace_ms() : config_.default_grace_ms;
  a->cancel = c;
  if (Status s = a->dir.WriteCancel(c); !s.ok()) log_->error("attempt {}: {}", a->id, ToStd(s.message()));
  log_->info("attempt {}: cancelling ({}, grace {} ms)", a->id, c.reason, c.grace_ms);
  if (a->watching_stage) {
    SignalStageGroup(*a, SIGTERM);
  } else if (a->watched) {
    SignalShim(*a);
  }
  // Otherwise the shim is still starting: CheckPidFile signals it once pid.json appears.
}

void Agent::SignalShim(Attempt& a) {
  a.cancel_signalled = true;
  // Through the pidfd, so a re-used pid can never be hit.
  if (PidfdSendSignal(a.watched->native_handle(), SIGTERM) != 0) {
    log_->warn("attempt {}: cannot signal the shim: {}", a.id, std::strerror(errno));
  }
}

void Agent::SignalStageGroup(Attempt& a, int sig) {
  if (!a.pid || !ProcessMatches(a.pid->stage_pid, a.pid->stage_start)) return;
  a.cancel_signalled = true;
  if (::kill(-a.pid->stage_pid, sig) != 0) ::kill(a.pid->stage_pid, sig);
  if (sig == SIGTERM && a.cancel) {
    a.kill_timer.expires_after(std::chrono::milliseconds(a.cancel->grace_ms));
    a.kill_timer.async_wait([this, id = a.id](const boost::system::error_code& ec) {
      if (ec) return;
      if (Attempt* at = Find(id); at != nullptr && !at->exit) SignalStageGroup(*at, SIGKILL);
    });
  }
}

void Agent::HandleAckExit(const v1::AckExit& ack) {
  Attempt* a = Find(ack.attempt_id());
  if (a == nullptr) return;
  if (!a->exit) {
    log_->warn("AckExit for attempt {}, which is still running; ignored", a->id);
    return;
  }
  if (Status s = a->dir.MarkDone(); !s.ok()) {
    log_->error("attempt {}: {}", a->id, ToStd(s.message()));
  }
  Forget(a->id);
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
    // With a watched shim, its pidfd reports the end; otherwise (a shim that was starting
    // when we were restarted) the file is all we get.
    if (!a->watched && !a->exit) CheckProgress(*a);
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

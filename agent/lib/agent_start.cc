// Agent: starting attempts, and re-adopting those found in the state dir.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

#include "agent/lib/agent.h"
#include "agent/lib/cgroup.h"
#include "agent/lib/readoption.h"
#include "core/fs.h"
#include "core/strings.h"

extern char** environ;

namespace longhaul::agent {

namespace {

Status TouchFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", path, errno);
  ::close(fd);
  return OkStatus();
}

// mkdir -p from the leaf: one mkdir when the parent exists (the usual case), instead of one
// per component of the path.
Status MakeDirsFromLeaf(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return OkStatus();
  if (errno != ENOENT) return ErrnoStatus("mkdir", path, errno);
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return MakeDirs(path);
  RETURN_IF_ERROR(MakeDirsFromLeaf(path.substr(0, slash)));
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return OkStatus();
  return ErrnoStatus("mkdir", path, errno);
}

}  // namespace

std::string Agent::OtherAttempt(const AttemptDir& dir, const v1::StartAttempt& spec) {
  if (!dir.Exists()) return "";
  Result<v1::StartAttempt> had = dir.ReadSpec();
  // Without a readable spec.json (an agent stopped before writing it) there is nothing to
  // compare: taken as the same attempt, as before spec.json was compared.
  if (!had.ok()) return "";
  if (had->run_id() == spec.run_id() && had->stage() == spec.stage() &&
      had->attempt() == spec.attempt()) {
    return "";
  }
  return StrCat("run ", had->run_id(), " stage ", had->stage(), " attempt ", had->attempt());
}

void Agent::HandleStart(const v1::StartAttempt& spec) {
  int64_t id = spec.attempt_id();
  if (id <= 0) {
    log_->error("StartAttempt without an attempt id; ignored");
    return;
  }
  start_received_ms_[id] = clock_->NowMs();
  AttemptDir existing(config_.state_dir, id);
  if (std::string other = OtherAttempt(existing, spec); !other.empty()) {
    // Never run it, and never touch the other attempt's files: tell the coordinator, which
    // retries the stage under a new id.
    log_->error(
        "attempt id {} is already used here by {} ({}); the new attempt (run {} stage {} "
        "attempt {}) is not started",
        id, other, existing.path(), spec.run_id(), spec.stage(), spec.attempt());
    v1::AgentMessage m;
    v1::AttemptExited* e = m.mutable_exited();
    e->set_attempt_id(id);
    e->set_exit_code(-1);
    e->set_ended_at_ms(clock_->NowMs());
    e->set_id_collision(true);
    e->set_reason(StrCat("lost: attempt id ", id, " is already used on agent ", config_.agent_id,
                         " by ", other, "; nothing was started"));
    Send(std::move(m));
    return;
  }
  highest_attempt_id_ = std::max(highest_attempt_id_, id);
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
  // spec.json is for people, and for OtherAttempt (read only when a StartAttempt names an id
  // that has a directory), so it is written once the shim is on its way rather than before:
  // one file creation less between a stage's end and the next stage's start. An attempt that
  // fails to start gets it too.
  bool dir_made = false;
  auto write_spec = [&] {
    if (Status s = a.dir.WriteSpec(spec); !s.ok() && !NoteWriteFailure(s))
      log_->warn("attempt {}: {}", a.id, ToStd(s.message()));
  };
  auto fail = [&](const Status& s) {
    if (dir_made) write_spec();
    log_->error("attempt {}: {}", a.id, ToStd(s.message()));
    ExitInfo e = StartFailure(ToStd(s.message()), clock_->NowMs());
    if (absl::IsUnavailable(s)) {
      // Out of file descriptors (thousands of attempts at once): the node's state, not the
      // stage's, so it is retried on the infrastructure's budget, as a lost attempt is.
      e.failure_kind = "lost";
      e.reason = StrCat("agent out of file descriptors: ", s.message());
    }
    RecordExit(a, e, /*write_file=*/true);
  };
  std::string out_dir = spec.output_dir();
  if (out_dir.empty()) {
    out_dir = StrCat(config_.data_dir, "/runs/", spec.run_id(), "/", spec.stage());
    if (!spec.resume()) out_dir += StrCat("/attempt-", spec.attempt());
  }
  if (Status s = MakeDirsFromLeaf(a.dir.work_dir()); !s.ok()) {
    return fail(Annotate(s, "cannot create the attempt's directory"));
  }
  dir_made = true;
  if (Status s = MakeDirsFromLeaf(out_dir); !s.ok()) {
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
  ls.args = {"--dir", a.dir.path(), "--grace-ms", std::to_string(grace)};
  if (executor_->agent_cgroups() && !config_.cgroup_parent.empty()) {
    ls.args.push_back("--cgroup");
    ls.args.push_back(StrCat(config_.cgroup_parent, "/", AttemptCgroupName(a.id, a.dir.path())));
  }
  ls.args.push_back("--");
  if (spec.preflight()) {
    // The check runs in the attempt's place, on its GPUs, and execs the stage when they pass.
    if (config_.preflight_argv.empty()) {
      return fail(absl::FailedPreconditionError(
          "the stage asks for a pre-flight (preflight: true) and this agent has no GPU check "
          "(--gpu-check is empty)"));
    }
    ls.args.insert(ls.args.end(), config_.preflight_argv.begin(), config_.preflight_argv.end());
    ls.args.push_back("--");
  }
  ls.args.insert(ls.args.end(), spec.argv().begin(), spec.argv().end());
  ls.env = StageEnv(spec, out_dir, a.dir);
  {
    std::string stage_path, profiles_env;
    for (const std::string& kv : ls.env) {
      if (kv.rfind("PATH=", 0) == 0) stage_path = kv.substr(5);
      if (kv.rfind("LONGHAUL_ENGINE_PROFILES=", 0) == 0) profiles_env = kv.substr(25);
    }
    std::vector<std::string> argv(spec.argv().begin(), spec.argv().end());
    a.environment = env_probe_.Probe(argv, stage_path, profiles_env);
  }
  ls.cwd = a.dir.path();
  ls.new_session = true;  // from its first instruction, a kill of the agent's group misses it
  RunRequest req;
  req.attempt_id = a.id;
  req.attempt_dir = a.dir.path();
  req.shim = std::move(ls);
  req.resources = spec.resources();
  req.timeout_ms = spec.timeout_ms();
  req.grace_ms = grace;
  req.exclude_nodes.assign(spec.exclude_nodes().begin(), spec.exclude_nodes().end());
  req.priority = spec.priority();
  executor_->Start(a, spec, std::move(req), write_spec, fail);
}

void Agent::StartWatched(Attempt& a, const v1::StartAttempt& spec, const RunRequest& req,
                         const std::function<void()>& write_spec,
                         const std::function<void(const Status&)>& fail) {
  auto started = runner_->Start(req);
  if (!started.ok()) return fail(started.status());
  pid_t pid = started->pid;
  a.shim_pid = pid;
  a.shim_is_child = true;
  log_->info("attempt {}: started {} (shim pid {})", a.id, spec.argv(0), pid);
  write_spec();
  if (Status s = WatchPid(a, pid, /*is_shim=*/true); !s.ok()) {
    // Unlikely (out of descriptors); the heartbeat's waitpid check still notices the end.
    log_->error("attempt {}: cannot watch the shim: {}", a.id, ToStd(s.message()));
  }
  CheckPidFile(a);
}

std::vector<std::string> Agent::StageEnv(const v1::StartAttempt& spec, const std::string& out_dir,
                                         const AttemptDir& dir) {
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
  env["LONGHAUL_CONTROL"] = dir.control_path();
  env["LONGHAUL_RESUME"] = spec.resume() ? "1" : "0";
  if (spec.checkpoint().empty()) {
    env.erase("LONGHAUL_CHECKPOINT");
  } else {
    env["LONGHAUL_CHECKPOINT"] = spec.checkpoint();
  }
  env["LONGHAUL_RUN_ID"] = std::to_string(spec.run_id());
  env["LONGHAUL_STAGE"] = spec.stage();
  env["LONGHAUL_ATTEMPT"] = std::to_string(spec.attempt());
  // Where other nodes reach this one: a service binds it and puts it in its endpoint, so that
  // its dependents may run on other agents. Never inherited from the agent's own environment.
  if (config_.advertise_host.empty()) {
    env.erase("LONGHAUL_ADVERTISE_HOST");
  } else {
    env["LONGHAUL_ADVERTISE_HOST"] = config_.advertise_host;
  }
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

Attempt& Agent::AddAdopted(int64_t id, const AttemptDir& dir) {
  auto owned = std::make_unique<Attempt>(io_, id, dir);
  Attempt& a = *owned;
  attempts_[id] = std::move(owned);
  if (auto hint = dir.ReadAckHint(); hint.ok() && ValidHint(dir, *hint)) {
    a.pos_offset = hint->offset;
    a.pos_seq = a.acked_seq = a.last_event_seq = a.saved_hint_seq = hint->seq;
    a.tailer.Rewind(hint->offset, hint->seq);
  }
  if (Status s = TouchFile(dir.events_path()); !s.ok())
    log_->warn("attempt {}: {}", id, ToStd(s.message()));
  WatchFiles(a);
  return a;
}

void Agent::Adopt(int64_t id, const AttemptDir& dir, bool even_if_done) {
  executor_->Adopt(id, dir, even_if_done);
}

void Agent::AdoptWatched(int64_t id, const AttemptDir& dir, bool even_if_done) {
  int lock_fd = -1;
  // A `done` attempt asked for again is reported from its files, which are never written again:
  // its exit.json (if any) is the record the coordinator already acknowledged.
  bool was_done = even_if_done && dir.IsDone();
  AttemptProbe probe = ProbeAttempt(dir, &lock_fd, /*even_if_done=*/even_if_done);
  if (even_if_done) probe.done = false;
  Adoption decision = DecideAdoption(probe);
  if (decision == Adoption::kIgnore) return;
  log_->info("attempt {}: found in the state dir: {}", id, AdoptionName(decision));
  Attempt& a = AddAdopted(id, dir);
  a.pid = probe.pid;
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
      RecordExit(
          a,
          UnknownExit(probe.exit_error.empty() ? std::string(kShimDiedReason)
                                               : StrCat("exit status unknown: ", probe.exit_error),
                      clock_->NowMs(), /*start_failed=*/false),
          /*write_file=*/!was_done);
      break;
    case Adoption::kWaitForShim:
      break;  // pid.json or exit.json will appear; the heartbeat also checks
    case Adoption::kNeverStarted:
      // Written while holding the shim's lock, so a shim still being exec'd will refuse to run.
      RecordExit(a, UnknownExit(kNeverStartedReason, clock_->NowMs(), /*start_failed=*/true),
                 /*write_file=*/!was_done);
      break;
    case Adoption::kIgnore:
      break;
  }
  if (lock_fd >= 0) ::close(lock_fd);
  Pump(a);
}

bool Agent::ValidHint(const AttemptDir& dir, const AckHint& hint) {
  if (hint.offset == 0) return hint.seq == 0;
  // The hint must end a line of the file as it is now (or end the file: a last line without
  // '\n' after the stage ended), or it is not trusted and everything is sent again.
  int fd = ::open(dir.events_path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char c = 0;
  bool ok = ::pread(fd, &c, 1, hint.offset - 1) == 1 &&
            (c == '\n' || ::lseek(fd, 0, SEEK_END) == hint.offset);
  ::close(fd);
  return ok;
}

}  // namespace longhaul::agent

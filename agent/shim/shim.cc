#include "agent/shim/shim.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "agent/shim/attempt_cgroup.h"
#include "agent/shim/leftovers.h"
#include "agent/shim/shim_files.h"
#include "core/atomic_file.h"
#include "core/json_string.h"

namespace longhaul::shim {
namespace {

// exit.json and pid.json: atomic against any process being killed, not fsynced (the agent's
// attempt files, docs/architecture.md, "Durability of the agent's files").
constexpr Durability kShimFileDurability = Durability::kRenameOnly;

// What the child sends through the CLOEXEC pipe when it cannot exec.
struct StartError {
  int step;  // kStepCgroup, kStepChdir or kStepExec
  int err;
};
constexpr int kStepChdir = 1;
constexpr int kStepExec = 2;
constexpr int kStepCgroup = 3;

constexpr int64_t kRemnantWaitMs = 2000;

void Log(const char* fmt, const std::string& a = "", const std::string& b = "") {
  std::fprintf(stderr, "longhaul-shim: ");
  std::fprintf(stderr, fmt, a.c_str(), b.c_str());
  std::fprintf(stderr, "\n");
}

struct ExitRecord {
  int exit_code = 0;
  int signal = 0;
  int64_t ended_at_ms = 0;
  std::string reason;
  bool start_failed = false;
  int leftovers_killed = 0;
  CgroupUsage usage;
};

// `prepared`, when given, holds an unnamed file made earlier in `dir`, published as exit.json.
int WriteExit(const std::string& dir, const ExitRecord& e, PreparedFile* prepared) {
  std::string json =
      ExitRecordJson(e.exit_code, e.signal, e.ended_at_ms, e.reason, e.start_failed,
                     e.leftovers_killed, e.usage.memory_peak_bytes, e.usage.cpu_usec);
  // Atomic against any process being killed, and not fsynced: after a crash of the node the
  // attempt is reported lost whatever this file says (docs/architecture.md).
  std::string path = dir + "/exit.json";
  int err = prepared != nullptr && prepared->Publish(path, json)
                ? 0
                : WriteFileAtomicErrno(path, json, kShimFileDurability);
  if (err != 0) Log("cannot write %s/exit.json: %s", dir, std::strerror(err));
  return err;
}

int StartFailed(const std::string& dir, const std::string& reason, PreparedFile* prepared) {
  Log("%s", reason);
  ExitRecord rec;
  rec.exit_code = 127;
  rec.ended_at_ms = WallMs();
  rec.reason = reason;
  rec.start_failed = true;
  WriteExit(dir, rec, prepared);
  return 127;
}

std::string StartFailureReason(const StartError& e, const ShimOptions& opts) {
  const std::string& program = opts.argv[0];
  if (e.step == kStepCgroup) {
    return "cannot enter cgroup " + opts.cgroup + ": " + std::strerror(e.err);
  }
  if (e.step == kStepChdir) {
    const char* out = std::getenv("LONGHAUL_OUTPUT_DIR");
    return "cannot enter output dir " + std::string(out ? out : "") + ": " + std::strerror(e.err);
  }
  switch (e.err) {
    case ENOENT:
      return "not found: " + program;
    case EACCES:
    case EPERM:
      return "permission denied: " + program;
    default:
      return "cannot execute " + program + ": " + std::strerror(e.err);
  }
}

// `cgroup_procs`: the attempt's cgroup.procs, or -1.
[[noreturn]] void ExecStage(const ShimOptions& opts, int cgroup_procs, int in, int out, int err,
                            int report) {
  if (cgroup_procs >= 0) {
    if (int e = EnterCgroup(cgroup_procs); e != 0) {
      StartError se{kStepCgroup, e};
      (void)!::write(report, &se, sizeof se);
      ::_exit(127);
    }
  }
  ::setpgid(0, 0);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  // The shim blocked and may have inherited ignored signals (gRPC ignores SIGPIPE in the
  // agent); the stage starts as a fresh program would.
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (const char* dir = std::getenv("LONGHAUL_OUTPUT_DIR"); dir != nullptr && *dir != '\0') {
    if (::chdir(dir) != 0) {
      StartError e{kStepChdir, errno};
      (void)!::write(report, &e, sizeof e);
      ::_exit(127);
    }
  }
  std::vector<char*> argv;
  for (const auto& a : opts.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  StartError e{kStepExec, errno};
  (void)!::write(report, &e, sizeof e);
  ::_exit(127);
}

int OpenLog(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

// Waits for the stage's main process, turning SIGTERM/SIGINT/SIGHUP/SIGUSR1 into a cancel of its
// whole process group with escalation to SIGKILL after the grace period.
class Supervisor {
 public:
  // `cgroup`: the attempt's cgroup, which the stage entered; empty: none.
  Supervisor(const ShimOptions& opts, pid_t stage, const sigset_t& set, std::string cgroup)
      : opts_(opts), stage_(stage), set_(set), cgroup_(std::move(cgroup)) {}

  // Returns the main process's wait status.
  int WaitMain() {
    while (!main_done_) {
      siginfo_t info;
      int sig;
      if (kill_at_ms_ >= 0) {
        int64_t left = kill_at_ms_ - WallMs();
        if (left < 0) left = 0;
        timespec ts{static_cast<time_t>(left / 1000), static_cast<long>(left % 1000) * 1'000'000};
        sig = ::sigtimedwait(&set_, &info, &ts);
      } else {
        sig = ::sigwaitinfo(&set_, &info);
      }
      if (sig < 0) {
        if (errno == EAGAIN) {
          SignalStage(SIGKILL);
          kill_at_ms_ = -1;
        }
        continue;
      }
      if (sig == SIGCHLD) {
        Reap();
      } else {
        Cancel(sig);
      }
    }
    return main_status_;
  }

  // After the main process ended: nothing the stage started may outlive the attempt, in its
  // cgroup, its group or not (attempt_cgroup.h, leftovers.h). Returns how many processes were
  // still alive and killed; `usage` gets what the cgroup measured.
  int KillRemnants(CgroupUsage* usage) {
    int killed = 0;
    if (!cgroup_.empty()) {
      std::string error;
      killed = KillCgroup(
          cgroup_, kRemnantWaitMs, [this] { Reap(); }, usage, &error);
      if (!error.empty()) Log("%s", error);
      if (killed < 0) killed = 0;  // what is left is found through /proc below
    }
    // Also with a cgroup: a process may have been moved out of it by a privileged stage.
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    return killed + KillAttemptProcesses(
                        ::getpid(), stage_, Session(), kRemnantWaitMs, [this] { Reap(); },
                        [&chld] {
                          timespec ts{0, 10'000'000};
                          ::sigtimedwait(&chld, nullptr, &ts);
                        });
  }

  bool cancelled() const { return cancelled_; }
  const std::string& cancel_reason() const { return cancel_reason_; }

 private:
  void Reap() {
    int status;
    pid_t p;
    // As a child subreaper the shim also inherits the stage's orphans; reap them all.
    while ((p = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (p == stage_) {
        main_done_ = true;
        main_status_ = status;
      }
    }
  }

  void Cancel(int sig) {
    if (cancelled_) return;  // a second signal does not shorten the grace period
    cancelled_ = true;
    int64_t grace = opts_.grace_ms;
    std::string cancel;
    if (ReadSmallFile(opts_.dir + "/cancel.json", &cancel)) {
      JsonFindString(cancel, "reason", &cancel_reason_);
      int64_t g;
      if (JsonFindInt(cancel, "grace_ms", &g) && g > 0) grace = g;
    }
    if (cancel_reason_.empty()) {
      cancel_reason_ = sig == SIGUSR1 ? std::string(kTimeLimitReason)
                                      : std::string("shim got ") + ::strsignal(sig);
    }
    SignalStage(SIGTERM);
    kill_at_ms_ = WallMs() + grace;
  }

  // The group first; the main process alone only if it left its group (setsid in the stage);
  // then every other process of the attempt, in its cgroup or found through /proc (a detached
  // helper gets its SIGTERM and grace period too).
  void SignalStage(int sig) {
    if (::kill(-stage_, sig) != 0 && errno == ESRCH) ::kill(stage_, sig);
    if (!cgroup_.empty()) {
      for (pid_t p : CgroupProcesses(cgroup_)) ::kill(p, sig);
    }
    for (pid_t p : AttemptProcesses(ListProcesses(), ::getpid(), stage_, Session())) {
      ::kill(p, sig);
    }
  }

  // The shim's session when it leads one: the stage's processes are in it unless they left.
  static pid_t Session() { return ::getsid(0) == ::getpid() ? ::getpid() : 0; }

  const ShimOptions& opts_;
  const pid_t stage_;
  const sigset_t set_;
  const std::string cgroup_;
  bool main_done_ = false;
  int main_status_ = 0;
  bool cancelled_ = false;
  std::string cancel_reason_;
  int64_t kill_at_ms_ = -1;
};

// glibc's posix_spawn (how the agent starts us) leaves glibc's own two signals, 32 and 33,
// ignored, and an ignored signal stays ignored across exec. glibc refuses to touch them
// through sigaction, so the kernel is asked directly; all-zero is SIG_DFL, no flags, no mask
// on every architecture.
void ResetGlibcInternalSignals() {
  for (int sig : {32, 33}) {
    unsigned long dfl[4] = {0, 0, 0, 0};
    ::syscall(SYS_rt_sigaction, sig, dfl, nullptr, sizeof(uint64_t));
  }
}

}  // namespace

int RunShim(const ShimOptions& opts) {
  // The agent may leak descriptors into us; the stage must not inherit them.
  ::close_range(3, ~0U, 0);
  // The agent starts us in a session of our own already (POSIX_SPAWN_SETSID); anyone else
  // may not have.
  if (::getsid(0) != ::getpid() && ::setsid() < 0) {
    // Only when started as a process group leader that does not lead its session.
    Log("setsid: %s (continuing in the caller's session)", std::strerror(errno));
  }
  ResetGlibcInternalSignals();
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  // An inherited SIG_IGN for SIGCHLD would let the kernel reap the stage before we see its
  // status; the others are waited for with sigwaitinfo, which wants them at their defaults.
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1}) ::signal(sig, SIG_DFL);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  const std::string& dir = opts.dir;
  // The lock is the attempt directory itself: no file to create for it.
  int lock = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock < 0) {
    Log("cannot open %s: %s", dir, std::strerror(errno));
    return kShimRefused;
  }
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    Log("another shim runs the attempt in %s", dir);
    return kShimRefused;
  }
  // The agent, restarted, may have declared this attempt never started while we were being
  // exec'd; then the stage must not run at all.
  if (::access((dir + "/exit.json").c_str(), F_OK) == 0) {
    Log("%s/exit.json exists: the attempt has already ended", dir);
    return kShimRefused;
  }

  // exit.json's inode and bytes are taken now, before the stage can fill the disk; its end
  // then needs neither (docs/agent.md, "The exit record").
  PreparedFile exit_file(dir, kExitRecordReserve);
  if (!exit_file.reserved()) {
    Log("cannot reserve %s/exit.json's bytes: %s (it is written the ordinary way)", dir,
        std::strerror(exit_file.reserve_error()));
  }

  int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int out = OpenLog(dir + "/stdout.log");
  if (out < 0) {
    return StartFailed(dir, "cannot open " + dir + "/stdout.log: " + std::strerror(errno),
                       &exit_file);
  }
  int err = OpenLog(dir + "/stderr.log");
  if (err < 0) {
    return StartFailed(dir, "cannot open " + dir + "/stderr.log: " + std::strerror(errno),
                       &exit_file);
  }
  // The shim's own complaints go to the stage's stderr.log, where an operator looks.
  ::dup2(err, 2);

  // Made and opened here, entered by the stage between fork and exec (attempt_cgroup.h).
  int cgroup_procs = -1;
  if (!opts.cgroup.empty()) {
    int e = 0;
    cgroup_procs = OpenCgroupProcs(opts.cgroup, &e);
    if (cgroup_procs < 0) {
      Log("cannot use cgroup %s: %s (leftovers are found through /proc)", opts.cgroup,
          std::strerror(e));
    }
  }
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    return StartFailed(dir, std::string("pipe: ") + std::strerror(errno), &exit_file);
  pid_t stage = ::fork();
  if (stage < 0) {
    return StartFailed(dir, std::string("cannot fork: ") + std::strerror(errno), &exit_file);
  }
  if (stage == 0) ExecStage(opts, cgroup_procs, in, out, err, report[1]);
  std::string cgroup = cgroup_procs >= 0 ? opts.cgroup : "";
  if (cgroup_procs >= 0) ::close(cgroup_procs);
  ::setpgid(stage, stage);  // also done by the child; whichever runs first wins the race
  ::close(report[1]);
  ::close(in);
  ::close(out);

  StartError start_error{};
  ssize_t n;
  do {
    n = ::read(report[0], &start_error, sizeof start_error);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof start_error)) {
    int status;
    ::waitpid(stage, &status, 0);
    if (!cgroup.empty()) ::rmdir(cgroup.c_str());
    return StartFailed(dir, StartFailureReason(start_error, opts), &exit_file);
  }

  int64_t started_at = WallMs();
  std::string pid_json = "{\"shim_pid\":" + std::to_string(::getpid()) +
                         ",\"shim_start\":" + std::to_string(ProcStartTime(::getpid())) +
                         ",\"stage_pid\":" + std::to_string(stage) +
                         ",\"stage_start\":" + std::to_string(ProcStartTime(stage)) +
                         ",\"started_at_ms\":" + std::to_string(started_at) +
                         (cgroup.empty() ? "" : ",\"cgroup\":" + JsonQuote(cgroup)) + "}\n";
  // Not fsynced: after a crash of the node the pids in it mean nothing anyway.
  if (int e = WriteFileAtomicErrno(dir + "/pid.json", pid_json, kShimFileDurability); e != 0) {
    Log("cannot write %s/pid.json: %s", dir, std::strerror(e));
  }

  Supervisor sup(opts, stage, set, cgroup);
  int status = sup.WaitMain();
  ExitRecord rec;
  rec.ended_at_ms = WallMs();
  rec.leftovers_killed = sup.KillRemnants(&rec.usage);
  if (rec.leftovers_killed > 0) Log("%s", LeftoversNote(rec.leftovers_killed));
  if (WIFSIGNALED(status)) {
    rec.signal = WTERMSIG(status);
    rec.exit_code = 128 + rec.signal;
  } else {
    rec.exit_code = WEXITSTATUS(status);
  }
  if (sup.cancelled()) rec.reason = sup.cancel_reason();
  WriteExit(dir, rec, &exit_file);
  return rec.exit_code;
}

}  // namespace longhaul::shim

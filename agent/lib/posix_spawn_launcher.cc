#include "agent/lib/posix_spawn_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/strings.h"

namespace longhaul::agent {
namespace {

// Owns the attribute and file-action objects; posix_spawn's C API has no destructors.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

}  // namespace

Result<pid_t> PosixSpawnLauncher::Launch(const LaunchSpec& spec) {
  auto failed = [&](std::string_view where, int err) {
    return absl::FailedPreconditionError(
        StrCat("cannot start ", spec.program, where, ": ", std::strerror(err)));
  };
  SpawnSetup s;
  // The agent's threads may block signals and gRPC ignores SIGPIPE: the child starts with an
  // empty mask and every signal at its default, as a fresh program would.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.new_session) flags |= POSIX_SPAWN_SETSID;
  int rc = posix_spawnattr_setflags(s.attr(), flags);
  if (rc == 0) rc = posix_spawnattr_setsigmask(s.attr(), &none);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(s.attr(), &all);
  // 0-2 on /dev/null; nothing else of the agent's (sockets, agent.lock) leaks into the child.
  if (rc == 0) rc = posix_spawn_file_actions_addopen(s.actions(), 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_addopen(s.actions(), 1, "/dev/null", O_WRONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(s.actions(), 1, 2);
  if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(s.actions(), 3);
  if (rc == 0 && !spec.cwd.empty()) {
    rc = posix_spawn_file_actions_addchdir_np(s.actions(), spec.cwd.c_str());
  }
  if (rc != 0) return failed(" (setting up posix_spawn)", rc);

  std::vector<char*> argv;
  argv.reserve(spec.args.size() + 2);
  argv.push_back(const_cast<char*>(spec.program.c_str()));
  for (const auto& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(spec.env.size() + 1);
  for (const auto& kv : spec.env) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;  // not "K=V": no program could read it
    envp.push_back(const_cast<char*>(kv.c_str()));
  }
  envp.push_back(nullptr);

  pid_t pid = -1;
  // Not posix_spawnp: the program is a path, never searched on PATH.
  rc = ::posix_spawn(&pid, spec.program.c_str(), s.actions(), s.attr(), argv.data(), envp.data());
  if (rc != 0) {
    // The error may be the chdir's or the exec's; say which directory was in play.
    if (!spec.cwd.empty() && (rc == ENOENT || rc == EACCES || rc == ENOTDIR)) {
      return failed(StrCat(" in ", spec.cwd), rc);
    }
    return failed("", rc);
  }
  return pid;
}

}  // namespace longhaul::agent

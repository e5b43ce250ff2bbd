#include "core/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <map>
#include <vector>

#include "core/fs.h"
#include "core/strings.h"

extern char** environ;

namespace longhaul {
namespace {

int64_t MonotonicMs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

// The caller's environment with `extra` added (replacing variables of the same name).
std::vector<std::string> MergedEnv(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    if (extra.count(std::string(name)) == 0) env.emplace_back(entry);
  }
  for (const auto& [name, value] : extra) env.push_back(StrCat(name, "=", value));
  return env;
}

// Blocks SIGPIPE on this thread while it lives (a command that exits without reading its
// stdin must not kill the caller) and discards one that became pending meanwhile.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    timespec zero{0, 0};
    while (::sigtimedwait(&pipe_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_, old_;
};

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) { return StrJoin(argv, " "); }

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, int64_t timeout_ms,
                                 const CommandInput& input) {
  if (argv.empty()) return absl::InvalidArgumentError("RunCommand: empty command");
  SigpipeBlock no_sigpipe;
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return ErrnoStatus("pipe", argv[0], errno);
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(in[0]);
    ::close(in[1]);
    return ErrnoStatus("pipe", argv[0], e);
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    return ErrnoStatus("pipe", argv[0], e);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings = MergedEnv(input.env);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    for (int fd : {in[1], out[0], err[0]}) ::close(fd);
    return ErrnoStatus("cannot run", argv[0], rc);
  }
  ::fcntl(in[1], F_SETFL, ::fcntl(in[1], F_GETFL) | O_NONBLOCK);
  size_t written = 0;
  if (input.stdin_data.empty()) {
    ::close(in[1]);
    in[1] = -1;
  }
  CommandResult r;
  // 0: stdout, 1: stderr, 2: stdin (while there is something left to write).
  pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  int64_t deadline = MonotonicMs() + timeout_ms;
  bool timed_out = false;
  while (open_fds > 0 || fds[2].fd >= 0) {
    int64_t left = deadline - MonotonicMs();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(fds, 3, static_cast<int>(std::min<int64_t>(left, 1'000'000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (fds[2].fd >= 0 && fds[2].revents != 0) {
      ssize_t put = ::write(fds[2].fd, input.stdin_data.data() + written,
                            input.stdin_data.size() - written);
      if (put > 0) written += static_cast<size_t>(put);
      if ((put < 0 && errno != EINTR && errno != EAGAIN) || written == input.stdin_data.size()) {
        ::close(fds[2].fd);  // all written, or the command closed its stdin (EPIPE)
        fds[2].fd = -1;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        StrCat(CommandLine(argv), ": no answer after ", timeout_ms, " ms (killed)"));
  }
  r.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return r;
}

}  // namespace longhaul

// A supervised child process (Boost.Process) in a process group of its own, so a signal
// reaches every worker it forks (torchrun's ranks, an engine's workers) and never the
// supervisor itself. Its stdout and stderr are read on the io_context as raw bytes, as they
// arrive (progress bars redraw with '\r' and never end a line); what to do with them (echo,
// log files, line splitting) is the caller's.
//
// If the supervisor dies, even by SIGKILL, the child gets SIGTERM from the kernel
// (PR_SET_PDEATHSIG), so it never outlives its stage holding GPUs. Used by lh-serve's engine
// and the `command` backend of lh-extract / lh-finetune. Handlers run on the io_context's
// thread, never after the GroupProcess is destroyed; not thread-safe.
#pragma once

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace longhaul::stages {

class GroupProcess {
 public:
  struct Options {
    std::vector<std::string> argv;           // argv[0] without a '/' is looked up on PATH
    std::map<std::string, std::string> env;  // added to the inherited environment
    std::vector<std::string> unset_env;      // removed from it (before `env` is added)
    // Names the program in errors: "<what> not found on PATH: x", "<what> /bin/x: ...".
    std::string what = "command";
  };
  struct Handlers {
    // Bytes of output as they arrive.
    std::function<void(bool is_stderr, std::string_view bytes)> on_output;
    // One pipe reached end of file (or was closed by CloseOutput); `all`: it was the last.
    std::function<void(bool is_stderr, bool all)> on_output_end;
    // The main process ended: its exit code, or the signal that killed it (code -1).
    std::function<void(int exit_code, int signal)> on_exit;
  };

  // Errors: InvalidArgument for an empty argv; NotFound / PermissionDenied naming the program
  // (ErrnoStatus); Internal when the fork/exec fails.
  static Result<std::unique_ptr<GroupProcess>> Start(boost::asio::io_context& io, Options options,
                                                     Handlers handlers);
  // SIGKILLs the group if the main process still runs, and stops reading output.
  ~GroupProcess();

  pid_t pid() const;
  bool exited() const;
  // kill(-pgid, sig): the child and everything it started in its group.
  void SignalGroup(int sig);
  // Whether any process is left in the group (the leader included until reaped).
  bool GroupAlive() const;
  // Stops reading output (when a remnant that escaped the group keeps the pipes open).
  void CloseOutput();

  class Impl;

 private:
  explicit GroupProcess(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace longhaul::stages

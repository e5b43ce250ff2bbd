// The engine as a child process (Boost.Process) in a process group of its own, so that
// stopping it reaches every worker it forked; its stdout and stderr are read line by line on
// the io_context, appended to log files and echoed to lh-serve's own stdout/stderr.
//
// If lh-serve itself dies (even by SIGKILL), the engine gets SIGTERM from the kernel
// (PR_SET_PDEATHSIG), so it never outlives its supervisor holding GPUs.
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

class EngineProcess {
 public:
  struct Options {
    std::vector<std::string> argv;           // argv[0] without a '/' is looked up on PATH
    std::map<std::string, std::string> env;  // added to the inherited environment
    std::vector<std::string> unset_env;      // removed from it
    std::string stdout_log;                  // files, appended to
    std::string stderr_log;
    bool echo = true;
  };
  // One complete line of output (without its newline).
  using LineFn = std::function<void(bool is_stderr, std::string_view line)>;
  // The engine's main process ended: exit code, or the signal that killed it (0 if none).
  using ExitFn = std::function<void(int exit_code, int signal)>;

  // Errors: the program is not found or cannot be started, a log file cannot be opened.
  static Result<std::unique_ptr<EngineProcess>> Start(boost::asio::io_context& io, Options options,
                                                      LineFn on_line, ExitFn on_exit);
  ~EngineProcess();

  pid_t pid() const;
  bool exited() const;
  // kill(-pgid, sig): the engine and everything it started in its group.
  void SignalGroup(int sig);
  // Whether any process is left in the engine's group (the leader included until reaped).
  bool GroupAlive() const;

  class Impl;

 private:
  explicit EngineProcess(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace longhaul::stages

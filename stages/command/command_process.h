// An external command as a child process (Boost.Process) in a process group of its own, so a
// signal reaches every worker it forks (torchrun's ranks) and never the supervisor itself.
// Its stdout and stderr are read on the io_context as raw bytes, as they arrive (progress
// bars redraw with '\r' and never end a line).
//
// If the supervisor dies, even by SIGKILL, the command gets SIGTERM from the kernel
// (PR_SET_PDEATHSIG), so it never outlives its stage holding GPUs. Handlers run on the
// io_context's thread; not thread-safe.
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

namespace longhaul::command {

class CommandProcess {
 public:
  using OutputFn = std::function<void(bool is_stderr, std::string_view bytes)>;
  // The main process ended: its exit code, or the signal that killed it (code -1).
  using ExitFn = std::function<void(int exit_code, int signal)>;
  // Both output pipes reached end of file (every writer is gone).
  using EofFn = std::function<void()>;

  // argv[0] without a '/' is looked up on PATH. NotFound / PermissionDenied name the program.
  static Result<std::unique_ptr<CommandProcess>> Start(
      boost::asio::io_context& io, const std::vector<std::string>& argv,
      const std::map<std::string, std::string>& env, OutputFn on_output, ExitFn on_exit,
      EofFn on_eof);
  // SIGKILLs the group if the command still runs.
  ~CommandProcess();

  pid_t pid() const;
  bool exited() const;
  void SignalGroup(int sig);  // kill(-pgid, sig)
  bool GroupAlive() const;    // any process left in the group
  // Stops reading output (when a remnant that escaped the group keeps the pipes open).
  void CloseOutput();

  class Impl;

 private:
  explicit CommandProcess(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace longhaul::command

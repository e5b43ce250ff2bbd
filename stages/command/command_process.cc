#include "stages/command/command_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::command {

namespace bp = boost::process;
namespace asio = boost::asio;

class CommandProcess::Impl : public std::enable_shared_from_this<CommandProcess::Impl> {
 public:
  Impl(asio::io_context& io, OutputFn on_output, ExitFn on_exit, EofFn on_eof)
      : out_pipe_(io),
        err_pipe_(io),
        on_output_(std::move(on_output)),
        on_exit_(std::move(on_exit)),
        on_eof_(std::move(on_eof)) {}

  void Read(bool is_err) {
    auto& pipe = is_err ? err_pipe_ : out_pipe_;
    auto& buf = is_err ? err_buf_ : out_buf_;
    pipe.async_read_some(asio::buffer(buf), [self = shared_from_this(), is_err](
                                                boost::system::error_code ec, size_t n) {
      self->OnRead(is_err, ec, n);
    });
  }

  void OnRead(bool is_err, boost::system::error_code ec, size_t n) {
    if (n > 0 && on_output_) {
      on_output_(is_err, std::string_view((is_err ? err_buf_ : out_buf_).data(), n));
    }
    if (!ec) {
      Read(is_err);
      return;
    }
    // EOF, or the pipe was closed by CloseOutput.
    bool& closed = is_err ? err_closed_ : out_closed_;
    if (closed) return;
    closed = true;
    if (out_closed_ && err_closed_ && on_eof_) on_eof_();
  }

  bp::async_pipe out_pipe_;
  bp::async_pipe err_pipe_;
  std::array<char, 16384> out_buf_{};
  std::array<char, 16384> err_buf_{};
  bool out_closed_ = false, err_closed_ = false;
  OutputFn on_output_;
  ExitFn on_exit_;
  EofFn on_eof_;
  bp::child child_;
  pid_t pid_ = 0;
  bool exited_ = false;
};

Result<std::unique_ptr<CommandProcess>> CommandProcess::Start(
    asio::io_context& io, const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env_add, OutputFn on_output, ExitFn on_exit,
    EofFn on_eof) {
  if (argv.empty()) return absl::InvalidArgumentError("no command given (expected -- CMD ARGS...)");
  std::string exe = argv[0];
  if (exe.find('/') == std::string::npos) {
    boost::filesystem::path found = bp::search_path(exe);
    if (found.empty()) return absl::NotFoundError(StrCat("command not found on PATH: ", exe));
    exe = found.string();
  } else if (::access(exe.c_str(), X_OK) != 0) {
    int err = errno;
    Status s = ErrnoStatus("command", exe, err);
    return err == ENOENT ? absl::NotFoundError(s.message())
                         : absl::PermissionDeniedError(s.message());
  }
  auto impl =
      std::make_shared<Impl>(io, std::move(on_output), std::move(on_exit), std::move(on_eof));
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  bp::environment env = boost::this_process::environment();
  for (const auto& [k, v] : env_add) env[k] = v;
  std::weak_ptr<Impl> weak = impl;
  try {
    impl->child_ = bp::child(
        exe, bp::args(args), env, bp::std_in<bp::null, bp::std_out> impl->out_pipe_,
        bp::std_err > impl->err_pipe_, io, bp::on_exit([weak](int, const std::error_code&) {
          auto self = weak.lock();
          if (!self) return;
          self->exited_ = true;
          int status = self->child_.native_exit_code();
          int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
          int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
          if (self->on_exit_) self->on_exit_(code, sig);
        }),
        bp::extend::on_exec_setup([](auto&) {
          // Between fork and exec: a group of its own, and SIGTERM when the supervisor dies.
          ::setpgid(0, 0);
          ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        }));
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("start ", exe, ": ", e.what()));
  }
  impl->pid_ = impl->child_.id();
  // From the parent too, so the group exists before any signal is sent (whichever call runs
  // first wins; the other fails harmlessly).
  ::setpgid(impl->pid_, impl->pid_);
  impl->Read(false);
  impl->Read(true);
  return std::unique_ptr<CommandProcess>(new CommandProcess(std::move(impl)));
}

CommandProcess::~CommandProcess() {
  if (!impl_->exited_) SignalGroup(SIGKILL);
  CloseOutput();
}

pid_t CommandProcess::pid() const { return impl_->pid_; }
bool CommandProcess::exited() const { return impl_->exited_; }

void CommandProcess::SignalGroup(int sig) {
  if (impl_->pid_ > 0) ::kill(-impl_->pid_, sig);
}

bool CommandProcess::GroupAlive() const {
  if (impl_->pid_ <= 0) return false;
  return ::kill(-impl_->pid_, 0) == 0 || errno == EPERM;
}

void CommandProcess::CloseOutput() {
  boost::system::error_code ignored;
  impl_->out_pipe_.close(ignored);
  impl_->err_pipe_.close(ignored);
}

}  // namespace longhaul::command

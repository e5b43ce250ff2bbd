#include "stages/common/group_process.h"

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

namespace longhaul::stages {

namespace bp = boost::process;
namespace asio = boost::asio;

class GroupProcess::Impl : public std::enable_shared_from_this<GroupProcess::Impl> {
 public:
  Impl(asio::io_context& io, Handlers handlers)
      : out_pipe_(io), err_pipe_(io), handlers_(std::move(handlers)) {}

  void Read(bool is_err) {
    auto& pipe = is_err ? err_pipe_ : out_pipe_;
    auto& buf = is_err ? err_buf_ : out_buf_;
    pipe.async_read_some(asio::buffer(buf), [self = shared_from_this(), is_err](
                                                boost::system::error_code ec, size_t n) {
      self->OnRead(is_err, ec, n);
    });
  }

  void OnRead(bool is_err, boost::system::error_code ec, size_t n) {
    if (n > 0 && handlers_.on_output) {
      handlers_.on_output(is_err, std::string_view((is_err ? err_buf_ : out_buf_).data(), n));
    }
    if (!ec) {
      Read(is_err);
      return;
    }
    // EOF, or the pipe was closed by CloseOutput.
    bool& closed = is_err ? err_closed_ : out_closed_;
    if (closed) return;
    closed = true;
    if (handlers_.on_output_end) handlers_.on_output_end(is_err, out_closed_ && err_closed_);
  }

  void OnExit() {
    exited_ = true;
    int status = child_.native_exit_code();
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (handlers_.on_exit) handlers_.on_exit(code, sig);
  }

  bp::async_pipe out_pipe_;
  bp::async_pipe err_pipe_;
  std::array<char, 16384> out_buf_{};
  std::array<char, 16384> err_buf_{};
  bool out_closed_ = false, err_closed_ = false;
  Handlers handlers_;
  bp::child child_;
  pid_t pid_ = 0;
  bool exited_ = false;
};

Result<std::unique_ptr<GroupProcess>> GroupProcess::Start(asio::io_context& io, Options options,
                                                          Handlers handlers) {
  const std::string& what = options.what;
  if (options.argv.empty()) return absl::InvalidArgumentError(StrCat("no ", what, " given"));
  std::string exe = options.argv[0];
  if (exe.find('/') == std::string::npos) {
    boost::filesystem::path found = bp::search_path(exe);
    if (found.empty()) return absl::NotFoundError(StrCat(what, " not found on PATH: ", exe));
    exe = found.string();
  } else if (::access(exe.c_str(), X_OK) != 0) {
    return ErrnoStatus(what, exe, errno);
  }
  auto impl = std::make_shared<Impl>(io, std::move(handlers));
  std::vector<std::string> args(options.argv.begin() + 1, options.argv.end());
  bp::environment env = boost::this_process::environment();
  for (const auto& k : options.unset_env) env.erase(k);
  for (const auto& [k, v] : options.env) env[k] = v;
  std::weak_ptr<Impl> weak = impl;
  try {
    impl->child_ = bp::child(
        exe, bp::args(args), env, bp::std_in<bp::null, bp::std_out> impl->out_pipe_,
        bp::std_err > impl->err_pipe_, io, bp::on_exit([weak](int, const std::error_code&) {
          if (auto self = weak.lock()) self->OnExit();
        }),
        bp::extend::on_exec_setup([](auto&) {
          // In the child between fork and exec: a group of its own, and SIGTERM when the
          // supervisor dies.
          ::setpgid(0, 0);
          ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        }));
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("start ", what, " ", exe, ": ", e.what()));
  }
  impl->pid_ = impl->child_.id();
  // Also from the parent, so the group exists before any signal is sent (whichever of the
  // two runs first wins; the other fails harmlessly).
  ::setpgid(impl->pid_, impl->pid_);
  impl->Read(false);
  impl->Read(true);
  return std::unique_ptr<GroupProcess>(new GroupProcess(std::move(impl)));
}

GroupProcess::~GroupProcess() {
  if (!impl_->exited_) SignalGroup(SIGKILL);
  // Reads still queued on the io_context hold the Impl; they must not reach an owner that is
  // gone.
  impl_->handlers_ = {};
  CloseOutput();
}

pid_t GroupProcess::pid() const { return impl_->pid_; }
bool GroupProcess::exited() const { return impl_->exited_; }

void GroupProcess::SignalGroup(int sig) {
  if (impl_->pid_ > 0) ::kill(-impl_->pid_, sig);
}

bool GroupProcess::GroupAlive() const {
  if (impl_->pid_ <= 0) return false;
  return ::kill(-impl_->pid_, 0) == 0 || errno == EPERM;
}

void GroupProcess::CloseOutput() {
  boost::system::error_code ignored;
  impl_->out_pipe_.close(ignored);
  impl_->err_pipe_.close(ignored);
}

}  // namespace longhaul::stages

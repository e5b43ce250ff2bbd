#include "stages/serve/engine_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <cstdio>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::stages {

namespace bp = boost::process;
namespace asio = boost::asio;

class EngineProcess::Impl : public std::enable_shared_from_this<EngineProcess::Impl> {
 public:
  Impl(asio::io_context& io, LineFn on_line, ExitFn on_exit, bool echo)
      : out_pipe_(io),
        err_pipe_(io),
        on_line_(std::move(on_line)),
        on_exit_(std::move(on_exit)),
        echo_(echo) {}
  ~Impl() {
    if (out_log_) std::fclose(out_log_);
    if (err_log_) std::fclose(err_log_);
  }

  void Read(bool is_err) {
    auto& pipe = is_err ? err_pipe_ : out_pipe_;
    auto& buf = is_err ? err_buf_ : out_buf_;
    asio::async_read_until(
        pipe, buf, '\n',
        [self = shared_from_this(), is_err](boost::system::error_code ec, size_t n) {
          self->OnRead(is_err, ec, n);
        });
  }

  void OnRead(bool is_err, boost::system::error_code ec, size_t n) {
    auto& buf = is_err ? err_buf_ : out_buf_;
    if (!ec) {
      std::string line(asio::buffers_begin(buf.data()), asio::buffers_begin(buf.data()) + n);
      buf.consume(n);
      Line(is_err, std::move(line));
      Read(is_err);
      return;
    }
    // EOF (or the pipe closed): a last line without its newline still counts.
    if (buf.size() > 0) {
      std::string rest(asio::buffers_begin(buf.data()), asio::buffers_end(buf.data()));
      buf.consume(buf.size());
      rest.push_back('\n');
      Line(is_err, std::move(rest));
    }
  }

  void Line(bool is_err, std::string line) {
    FILE* log = is_err ? err_log_ : out_log_;
    if (log != nullptr) {
      std::fwrite(line.data(), 1, line.size(), log);
      std::fflush(log);
    }
    if (echo_) {
      FILE* echo = is_err ? stderr : stdout;
      std::fwrite(line.data(), 1, line.size(), echo);
      std::fflush(echo);
    }
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (on_line_) on_line_(is_err, line);
  }

  bp::async_pipe out_pipe_;
  bp::async_pipe err_pipe_;
  asio::streambuf out_buf_;
  asio::streambuf err_buf_;
  FILE* out_log_ = nullptr;
  FILE* err_log_ = nullptr;
  LineFn on_line_;
  ExitFn on_exit_;
  bool echo_;
  bp::child child_;
  pid_t pid_ = 0;
  bool exited_ = false;
};

Result<std::unique_ptr<EngineProcess>> EngineProcess::Start(asio::io_context& io, Options options,
                                                            LineFn on_line, ExitFn on_exit) {
  if (options.argv.empty()) return absl::InvalidArgumentError("empty engine command");
  auto impl = std::make_shared<Impl>(io, std::move(on_line), std::move(on_exit), options.echo);
  for (auto [path, slot] : {std::pair{options.stdout_log, &impl->out_log_},
                            std::pair{options.stderr_log, &impl->err_log_}}) {
    if (path.empty()) continue;
    *slot = std::fopen(path.c_str(), "ae");
    if (*slot == nullptr) return ErrnoStatus("open engine log", path, errno);
  }
  std::string exe = options.argv[0];
  if (exe.find('/') == std::string::npos) {
    boost::filesystem::path found = bp::search_path(exe);
    if (found.empty()) {
      return absl::NotFoundError(StrCat("engine command not found on PATH: ", exe));
    }
    exe = found.string();
  } else if (::access(exe.c_str(), X_OK) != 0) {
    return ErrnoStatus("engine command", exe, errno);
  }
  std::vector<std::string> args(options.argv.begin() + 1, options.argv.end());
  bp::environment env = boost::this_process::environment();
  for (const auto& k : options.unset_env) env.erase(k);
  for (const auto& [k, v] : options.env) env[k] = v;
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
          // In the child between fork and exec: a group of its own, and SIGTERM when the
          // supervisor dies.
          ::setpgid(0, 0);
          ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        }));
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("start engine ", exe, ": ", e.what()));
  }
  impl->pid_ = impl->child_.id();
  // Also from the parent, so the group exists before any signal is sent (whichever of the
  // two runs first wins; the other fails harmlessly).
  ::setpgid(impl->pid_, impl->pid_);
  impl->Read(false);
  impl->Read(true);
  return std::unique_ptr<EngineProcess>(new EngineProcess(std::move(impl)));
}

EngineProcess::~EngineProcess() {
  if (!impl_->exited_) SignalGroup(SIGKILL);
}

pid_t EngineProcess::pid() const { return impl_->pid_; }
bool EngineProcess::exited() const { return impl_->exited_; }

void EngineProcess::SignalGroup(int sig) {
  if (impl_->pid_ > 0) ::kill(-impl_->pid_, sig);
}

bool EngineProcess::GroupAlive() const {
  if (impl_->pid_ <= 0) return false;
  return ::kill(-impl_->pid_, 0) == 0 || errno == EPERM;
}

}  // namespace longhaul::stages

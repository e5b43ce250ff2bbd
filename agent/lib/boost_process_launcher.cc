#include "agent/lib/boost_process_launcher.h"

#include <signal.h>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/start_dir.hpp>

#include "core/strings.h"

namespace longhaul::agent {
namespace bp = boost::process;

Result<pid_t> BoostProcessLauncher::Launch(const LaunchSpec& spec) {
  bp::environment env;
  for (const auto& kv : spec.env) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // Runs in the child between fork and exec: the agent's threads may have blocked signals and
  // gRPC ignores SIGPIPE; the shim starts clean and makes its own session (setsid) itself.
  auto reset_signals = [](auto&) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
  };
  try {
    std::error_code ec;
    bp::child child(bp::exe = spec.program, bp::args = spec.args, env,
                    bp::std_in<bp::null, bp::std_out> bp::null, bp::std_err > bp::null,
                    bp::start_dir = spec.cwd.empty() ? std::string(".") : spec.cwd,
                    bp::extend::on_exec_setup = reset_signals, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          StrCat("cannot start ", spec.program, ": ", ec.message()));
    }
    pid_t pid = child.id();
    child.detach();
    return pid;
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(StrCat("cannot start ", spec.program, ": ", e.what()));
  }
}

}  // namespace longhaul::agent

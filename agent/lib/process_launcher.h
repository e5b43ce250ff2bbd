// Starting a detached process: the seam between the agent and the operating system's process
// creation, so the agent's logic does not depend on how the shim is started.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::agent {

struct LaunchSpec {
  std::string program;            // a path; not searched on PATH
  std::vector<std::string> args;  // without the program itself
  std::vector<std::string> env;   // the complete environment, "K=V"
  std::string cwd;                // empty: the caller's
  bool new_session = false;       // setsid: no signal to the caller's group reaches it
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts the process with stdin/stdout/stderr on /dev/null, no other descriptor of the
  // caller's, unblocked signals and default dispositions, and returns its pid. The caller owns
  // reaping it (waitpid). Errors name the program and why (not found, permission denied, ...).
  virtual Result<pid_t> Launch(const LaunchSpec& spec) = 0;
};

}  // namespace longhaul::agent

// Running a short external command (sbatch, squeue, scontrol, scancel) and reading what it
// prints, with a deadline. Thread-safe: nothing shared between calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::agent {

struct CommandResult {
  int exit_code = 0;  // 128+N when killed by signal N
  std::string out;    // stdout
  std::string err;    // stderr
};

// Runs argv (argv[0] searched on PATH) with stdin on /dev/null and the caller's environment.
// Errors: the program cannot be started (names it and why); DeadlineExceeded when it has not
// ended after timeout_ms (it is then SIGKILLed and reaped). A non-zero exit is not an error:
// the caller reads exit_code.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, int64_t timeout_ms);

// "prog arg1 arg2", for messages.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace longhaul::agent

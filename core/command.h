// Running a short external command (sbatch, squeue, scancel on the agent; a notification
// command on the coordinator) and reading what it prints, with a deadline. Thread-safe:
// nothing shared between calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul {

struct CommandResult {
  int exit_code = 0;  // 128+N when killed by signal N
  std::string out;    // stdout
  std::string err;    // stderr
};

struct CommandInput {
  std::string stdin_data;                  // written to its stdin, which is then closed
  std::map<std::string, std::string> env;  // added to (or replacing in) the caller's environment
};

// Runs argv (argv[0] searched on PATH) with the caller's environment plus `input.env`, and
// `input.stdin_data` on its stdin (a command that exits without reading it is fine).
// Errors: the program cannot be started (names it and why); DeadlineExceeded when it has not
// ended after timeout_ms (it is then SIGKILLed and reaped). A non-zero exit is not an error:
// the caller reads exit_code.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, int64_t timeout_ms,
                                 const CommandInput& input = {});

// "prog arg1 arg2", for messages.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace longhaul

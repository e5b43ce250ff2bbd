// The `longhaul` command line: parses argv (CLI11) and runs one command with `env`.
// main() wires the real environment; tests call this with their own streams.
#pragma once

#include "cli/cli_env.h"

namespace longhaul::cli {

// Returns the process exit code (cli/exit_codes.h); usage errors print help hints and give 2.
int RunCli(int argc, const char* const* argv, CliEnv& env);

}  // namespace longhaul::cli

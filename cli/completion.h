// `longhaul completion bash|zsh`: a shell completion script made from the command line's own
// definition (its subcommands and flags), so it never lags behind the CLI.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace longhaul::cli {

// Writes the script for `shell` ("bash" or "zsh"; zsh loads the bash one through
// bashcompinit). False for another shell.
bool WriteCompletion(const CLI::App& app, const std::string& shell, std::ostream& out);

}  // namespace longhaul::cli

#include "cli/cli_env.h"

#include "cli/exit_codes.h"
#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::cli {

std::string ResolveCoordinatorAddress(const std::string& flag, const CliEnv& env) {
  if (!flag.empty()) return flag;
  auto it = env.vars.find("LONGHAUL_COORDINATOR");
  if (it != env.vars.end() && !it->second.empty()) return it->second;
  Result<std::string> file = ReadFile(env.cwd + "/.longhaul/coordinator.addr");
  if (file.ok()) {
    std::string first = std::string(StripWhitespace(StrSplit(*file, '\n')[0]));
    if (!first.empty()) return first;
  }
  return "127.0.0.1:7070";
}

int CommandContext::Fail(const Status& status) {
  const char* kind = status.code() == absl::StatusCode::kUnauthenticated  ? "unauthenticated: "
                     : status.code() == absl::StatusCode::kPermissionDenied ? "permission denied: "
                                                                            : "";
  err() << "longhaul: " << kind << ToStd(status.message()) << '\n';
  return ExitCodeForStatus(status);
}

}  // namespace longhaul::cli

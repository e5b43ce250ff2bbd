// lh-serve --engine-version: the engine's version as its profile's version_command reports it
// (docs/engine-profiles.md, "Engine versions").
#include <cstdlib>

#include "core/command.h"
#include "core/strings.h"
#include "stages/serve/engine_profile.h"
#include "stages/serve/profile_finder.h"
#include "stages/serve/serve_app.h"

namespace longhaul::stages {

Result<std::string> EngineVersion(const ServeOptions& o, const std::string& exe_dir,
                                  int64_t timeout_ms) {
  const char* env_dirs = std::getenv("LONGHAUL_ENGINE_PROFILES");
  auto dirs =
      ProfileSearchPath(o.profiles_dirs, env_dirs ? env_dirs : "", BuiltinProfilesDir(), exe_dir);
  ASSIGN_OR_RETURN(std::string path, FindProfile(o.profile, dirs));
  ASSIGN_OR_RETURN(EngineProfile profile, LoadEngineProfile(path));
  if (profile.version_command.empty()) {
    return absl::NotFoundError(
        StrCat("profile '", profile.name, "' (", path, ") has no version_command"));
  }
  ASSIGN_OR_RETURN(CommandResult r, RunCommand(profile.version_command, timeout_ms));
  std::string line(StripWhitespace(r.out.substr(0, r.out.find('\n'))));
  if (r.exit_code != 0 || line.empty()) {
    // The last line says why (a Python traceback ends with the exception).
    std::string err(StripWhitespace(r.err));
    if (auto nl = err.rfind('\n'); nl != std::string::npos) err = err.substr(nl + 1);
    return absl::FailedPreconditionError(
        StrCat("profile '", profile.name, "': ", CommandLine(profile.version_command),
               r.exit_code != 0 ? StrCat(" exited with ", r.exit_code) : " printed nothing",
               err.empty() ? "" : StrCat(": ", err)));
  }
  return line;
}

}  // namespace longhaul::stages

// Where lh-serve finds an engine profile by name, so a user adds one without a rebuild.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::stages {

// The directories searched for NAME.yaml, in order: each --profiles-dir, each entry of
// $LONGHAUL_ENGINE_PROFILES (colon-separated), the repository's workflows/engines (compiled
// in), and <executable's dir>/../share/longhaul/engines (an installed tree). Missing
// directories are kept out.
std::vector<std::string> ProfileSearchPath(const std::vector<std::string>& flag_dirs,
                                           const std::string& env_value,
                                           const std::string& builtin_dir,
                                           const std::string& exe_dir);

// A value holding a '/' or ending in .yaml/.yml is a path; otherwise the first NAME.yaml (or
// .yml) in `dirs`. NotFound lists the directories searched and the profiles they hold.
Result<std::string> FindProfile(const std::string& name_or_path,
                                const std::vector<std::string>& dirs);

// The compiled-in directory (the source tree's workflows/engines).
std::string BuiltinProfilesDir();

}  // namespace longhaul::stages

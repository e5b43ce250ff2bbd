#include "stages/serve/profile_finder.h"

#include <filesystem>
#include <set>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::stages {

namespace fs = std::filesystem;

std::string BuiltinProfilesDir() { return LONGHAUL_ENGINE_PROFILES_DIR; }

std::vector<std::string> ProfileSearchPath(const std::vector<std::string>& flag_dirs,
                                           const std::string& env_value,
                                           const std::string& builtin_dir,
                                           const std::string& exe_dir) {
  std::vector<std::string> candidates = flag_dirs;
  for (const auto& d : StrSplit(env_value, ':')) {
    if (!d.empty()) candidates.push_back(d);
  }
  candidates.push_back(builtin_dir);
  if (!exe_dir.empty()) candidates.push_back(exe_dir + "/../share/longhaul/engines");
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& d : candidates) {
    std::error_code ec;
    if (d.empty() || !fs::is_directory(d, ec)) continue;
    std::string canon = fs::weakly_canonical(d, ec).string();
    if (!seen.insert(ec ? d : canon).second) continue;
    out.push_back(d);
  }
  return out;
}

Result<std::string> FindProfile(const std::string& name_or_path,
                                const std::vector<std::string>& dirs) {
  if (name_or_path.empty()) return absl::InvalidArgumentError("--profile is empty");
  bool is_path = name_or_path.find('/') != std::string::npos || EndsWith(name_or_path, ".yaml") ||
                 EndsWith(name_or_path, ".yml");
  if (is_path) {
    if (!PathExists(name_or_path)) {
      return absl::NotFoundError(StrCat("engine profile ", name_or_path, ": no such file"));
    }
    return name_or_path;
  }
  std::set<std::string> available;
  for (const auto& d : dirs) {
    for (const char* ext : {".yaml", ".yml"}) {
      std::string p = StrCat(d, "/", name_or_path, ext);
      if (PathExists(p)) return p;
    }
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      std::string ext = e.path().extension().string();
      if (ext == ".yaml" || ext == ".yml") available.insert(e.path().stem().string());
    }
  }
  return absl::NotFoundError(StrCat(
      "no engine profile '", name_or_path, "' in ",
      dirs.empty() ? std::string("(no profile directories)") : StrJoin(dirs, ", "),
      available.empty()
          ? std::string()
          : StrCat(" (available: ", StrJoin({available.begin(), available.end()}, ", "), ")")));
}

}  // namespace longhaul::stages

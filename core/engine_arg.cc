#include "core/engine_arg.h"

#include <string_view>

namespace longhaul {
namespace {

bool IsServeProgram(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  std::string_view prog = argv[0];
  auto slash = prog.rfind('/');
  if (slash != std::string_view::npos) prog.remove_prefix(slash + 1);
  return prog == "lh-serve";
}

// Every value of `flag` in argv[1..], as `flag VALUE` or `flag=VALUE`.
std::vector<std::string> EngineArgValues(const std::vector<std::string>& argv,
                                         std::string_view flag) {
  std::vector<std::string> out;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view a = argv[i];
    if (a == flag && i + 1 < argv.size()) {
      out.push_back(argv[++i]);
    } else if (a.size() > flag.size() && a.substr(0, flag.size()) == flag &&
               a[flag.size()] == '=') {
      out.emplace_back(a.substr(flag.size() + 1));
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> EngineProfileArg(const std::vector<std::string>& argv) {
  if (!IsServeProgram(argv)) return std::nullopt;
  std::vector<std::string> values = EngineArgValues(argv, "--profile");
  if (values.empty()) return std::nullopt;
  return values.back();  // as CLI11 takes the last of a repeated single-value flag
}

std::vector<std::string> EngineProfileDirsArg(const std::vector<std::string>& argv) {
  if (!IsServeProgram(argv)) return {};
  return EngineArgValues(argv, "--profiles-dir");
}

}  // namespace longhaul

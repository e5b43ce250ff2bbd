#include "agent/lib/slurm_classes.h"

#include "core/strings.h"

namespace longhaul::agent {
namespace {

// longhaul's classes (the coordinator's workflow::kPriorityClasses), most urgent first.
constexpr std::string_view kSlurmMappedClasses[] = {"high", "normal", "low"};

}  // namespace

Result<std::map<std::string, std::string>> ParseSlurmClassMap(
    const std::vector<std::string>& values) {
  std::map<std::string, std::string> out;
  for (const std::string& value : values) {
    for (std::string_view entry : StrSplit(value, ',')) {
      entry = StripWhitespace(entry);
      size_t eq = entry.find('=');
      if (eq == std::string_view::npos) {
        return absl::InvalidArgumentError(
            StrCat("'", entry, "': expected CLASS=NAME, such as high=urgent"));
      }
      std::string klass(StripWhitespace(entry.substr(0, eq)));
      std::string name(StripWhitespace(entry.substr(eq + 1)));
      bool known = false;
      for (std::string_view k : kSlurmMappedClasses) known = known || k == klass;
      if (!known) {
        return absl::InvalidArgumentError(
            StrCat("'", entry, "': unknown class '", klass, "' (high, normal or low)"));
      }
      if (name.empty() || name.find_first_of(" \t") != std::string::npos) {
        return absl::InvalidArgumentError(
            StrCat("'", entry, "': expected a Slurm name after '", klass, "='"));
      }
      auto [it, added] = out.emplace(klass, name);
      if (!added) {
        return absl::InvalidArgumentError(
            StrCat("'", entry, "': class ", klass, " is already mapped to '", it->second, "'"));
      }
    }
  }
  return out;
}

Status CheckSlurmClassArgs(const std::vector<std::string>& extra_args, std::string_view option,
                           std::string_view short_option) {
  for (const std::string& arg : extra_args) {
    std::string_view a(arg);
    if (a == option || a.starts_with(StrCat(option, "=")) || a.starts_with(short_option)) {
      return absl::FailedPreconditionError(
          StrCat("--slurm-arg=", arg, " sets ", option,
                 " for every job; map the classes, or pass it to sbatch, not both"));
    }
  }
  return OkStatus();
}

}  // namespace longhaul::agent

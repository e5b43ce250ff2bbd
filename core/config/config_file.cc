#include "core/config/config_file.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::config {
namespace {

std::string At(const std::string& path, const YAML::Mark& mark) {
  return StrCat(path, ":", mark.line + 1, ":", mark.column + 1, ": ");
}

}  // namespace

Result<ConfigFile> ParseConfigText(const std::string& text, const std::string& path) {
  ConfigFile file;
  file.path = path;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(StrCat(At(path, e.mark), e.msg));
  }
  if (root.IsNull()) return file;
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        StrCat(At(path, root.Mark()), "expected a mapping of KEY: VALUE lines"));
  }
  std::vector<std::string> errors;
  std::map<std::string, int> seen;  // key -> line
  for (const auto& item : root) {
    const YAML::Node& key = item.first;
    const YAML::Node& value = item.second;
    if (!key.IsScalar()) {
      errors.push_back(StrCat(At(path, key.Mark()), "a key must be a name such as 'listen'"));
      continue;
    }
    ConfigEntry entry;
    entry.key = key.Scalar();
    entry.line = key.Mark().line + 1;
    entry.column = key.Mark().column + 1;
    if (auto [it, fresh] = seen.emplace(entry.key, entry.line); !fresh) {
      errors.push_back(StrCat(At(path, key.Mark()), "'", entry.key,
                              "' is given twice (first on line ", it->second, ")"));
      continue;
    }
    if (value.IsScalar()) {
      entry.values.push_back(value.Scalar());
    } else if (value.IsSequence()) {
      entry.sequence = true;
      for (const YAML::Node& element : value) {
        if (!element.IsScalar()) {
          errors.push_back(StrCat(At(path, element.Mark()), "'", entry.key,
                                  "': a list of plain values is expected here"));
          break;
        }
        entry.values.push_back(element.Scalar());
      }
    } else if (value.IsMap()) {
      errors.push_back(StrCat(At(path, value.Mark()), "'", entry.key,
                              "': expected a value or a list of values, not a mapping"));
      continue;
    } else {
      errors.push_back(StrCat(At(path, key.Mark()), "'", entry.key,
                              "' has no value (write \"\" for an empty one)"));
      continue;
    }
    file.entries.push_back(std::move(entry));
  }
  if (!errors.empty()) return absl::InvalidArgumentError(StrJoin(errors, "\n"));
  return file;
}

Result<ConfigFile> ReadConfigFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseConfigText(text, path);
}

}  // namespace longhaul::config

#include "core/config/cli_config.h"

#include <algorithm>

#include "core/config/config_file.h"
#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::config {
namespace {

// Keys no file may set: the loader's own, and one-shot actions (longhauld --backup).
constexpr std::string_view kOwnKeys[] = {"help", "config", "check-config", "backup"};

bool IsOwnKey(std::string_view key) {
  return std::find(std::begin(kOwnKeys), std::end(kOwnKeys), key) != std::end(kOwnKeys);
}

bool IsFlag(const CLI::Option& option) { return option.get_expected_max() == 0; }
bool IsRepeatable(const CLI::Option& option) { return option.get_items_expected_max() > 1; }

// A YAML scalar that reads back as `value`.
std::string Quote(const std::string& value) {
  bool plain = !value.empty() && value != "true" && value != "false";
  for (char c : value) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == '/')) {
      plain = false;
    }
  }
  if (plain) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  for (std::string_view rest = text; !rest.empty();) {
    auto nl = rest.find('\n');
    lines.emplace_back(rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  return lines;
}

}  // namespace

CliConfig::CliConfig(CLI::App& app, std::string default_path)
    : app_(app), default_path_(std::move(default_path)) {
  app_.add_option("--config", config_path_,
                  "YAML file of flag values, the flags' names without dashes as keys; flags "
                  "on the command line win (default: " +
                      default_path_ + " when it exists)");
  app_.add_flag("--check-config", check_only_,
                "check the configuration (file and flags), print it and exit: 0 when valid, "
                "2 with every problem otherwise");
}

std::string CliConfig::KeyOf(const CLI::Option& option) {
  const auto& names = option.get_lnames();
  return names.empty() ? "" : names.front();
}

const CLI::Option* CliConfig::FindKey(std::string_view key) const {
  if (key.empty() || IsOwnKey(key)) return nullptr;
  for (const CLI::Option* option : app_.get_options()) {
    const auto& names = option->get_lnames();
    if (std::find(names.begin(), names.end(), key) != names.end()) return option;
  }
  return nullptr;
}

std::vector<std::string> CliConfig::Apply() {
  // The values the program starts with, for Effective(): flags not given still hold them.
  for (CLI::Option* option : app_.get_options()) {
    if (option->count() == 0) option->capture_default_str();
  }
  std::string path = config_path_;
  if (path.empty()) {
    if (!PathExists(default_path_)) return {};
    path = default_path_;
  }
  auto file = ReadConfigFile(path);
  if (!file.ok()) return Lines(ToStd(file.status().message()));
  read_path_ = path;
  std::vector<std::string> errors;
  for (const ConfigEntry& entry : file->entries) {
    std::string at = StrCat(path, ":", entry.line, ":", entry.column, ": ");
    CLI::Option* option = const_cast<CLI::Option*>(FindKey(entry.key));
    if (option == nullptr) {
      errors.push_back(StrCat(at, "unknown key '", entry.key,
                              "' (the keys are the flags of --help without their dashes)"));
      continue;
    }
    if (option->count() > 0) continue;  // the command line wins
    if (entry.sequence && !IsRepeatable(*option)) {
      errors.push_back(StrCat(at, "'", entry.key, "' takes one value, not a list"));
      continue;
    }
    if (IsFlag(*option) && entry.values[0] != "true" && entry.values[0] != "false") {
      errors.push_back(
          StrCat(at, "'", entry.key, "': expected true or false, not '", entry.values[0], "'"));
      continue;
    }
    if (entry.values.empty()) {  // `key: []`: the flag's own default, none
      from_file_.push_back(Origin{entry.key, entry.line});
      continue;
    }
    try {
      option->add_result(entry.values);
      option->run_callback();
    } catch (const CLI::Error& e) {
      option->clear();
      // A failed conversion may have written to the variable: put the default back.
      if (!option->get_default_str().empty()) {
        try {
          option->add_result(option->get_default_str());
          option->run_callback();
        } catch (const CLI::Error&) {
        }
        option->clear();
      }
      std::string value =
          entry.sequence ? "[" + StrJoin(entry.values, ", ") + "]" : entry.values[0];
      errors.push_back(StrCat(at, "'", entry.key, "': '", value, "' is not a valid ",
                              option->get_type_name(), " (", e.what(), ")"));
      continue;
    }
    from_file_.push_back(Origin{entry.key, entry.line});
  }
  return errors;
}

std::string CliConfig::Where(std::string_view key) const {
  for (const Origin& origin : from_file_) {
    if (origin.key == key) return StrCat(read_path_, ":", origin.line);
  }
  const CLI::Option* option = FindKey(key);
  if (option != nullptr && option->count() > 0) return StrCat("--", key);
  return StrCat("--", key, " (default)");
}

std::string CliConfig::Error(std::string_view key, std::string_view message) const {
  return StrCat(Where(key), ": ", message);
}

std::string CliConfig::Effective() const {
  std::string name = app_.get_name();
  name = name.substr(name.rfind('/') + 1);
  std::string out = StrCat("# Effective configuration of ", name,
                           read_path_.empty() ? "" : " (file " + read_path_ + ")", "\n");
  for (const CLI::Option* option : app_.get_options()) {
    std::string key = KeyOf(*option);
    if (key.empty() || IsOwnKey(key)) continue;
    std::vector<std::string> values =
        option->count() > 0 ? option->results() : std::vector<std::string>{};
    if (option->count() == 0 && !option->get_default_str().empty() && !IsRepeatable(*option)) {
      values.push_back(option->get_default_str());
    }
    std::string where = Where(key);
    if (IsRepeatable(*option)) {
      std::vector<std::string> quoted;
      for (const auto& v : values) quoted.push_back(Quote(v));
      out += StrCat(key, ": [", StrJoin(quoted, ", "), "]  # ", where, "\n");
    } else if (IsFlag(*option)) {
      bool on = !values.empty() && values.back() == "true";
      out += StrCat(key, ": ", on ? "true" : "false", "  # ", where, "\n");
    } else if (values.empty() && option->get_type_name() != "TEXT") {
      out += StrCat("# ", key, ": (not set)  # ", where, "\n");
    } else {
      out += StrCat(key, ": ", Quote(values.empty() ? "" : values.back()), "  # ", where, "\n");
    }
  }
  return out;
}

}  // namespace longhaul::config

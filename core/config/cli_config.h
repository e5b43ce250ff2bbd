// Binds a config file (core/config/config_file.h) to a program's CLI11 flags: the key of a
// flag is its long name without the dashes (`--http-host` -> `http-host`), a flag given on
// the command line wins over the file, and the file's problems are reported as PATH:LINE:COL.
//
//   CliConfig config(app, "/etc/longhaul/agent.yaml");
//   CLI11_PARSE(app, argc, argv);
//   std::vector<std::string> errors = config.Apply();
//
// Not thread-safe; used by main() before any thread starts.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::config {

class CliConfig {
 public:
  // Adds `--config FILE` and `--check-config` to `app` (which must outlive this). Without
  // --config, `default_path` is read when it exists and ignored otherwise.
  CliConfig(CLI::App& app, std::string default_path);

  // Call after app.parse(). Reads the file, then gives every key whose flag was not on the
  // command line its value, converted and validated as the flag's would be. Returns every
  // problem, one line each, "PATH:LINE:COL: ..." (an unreadable file, a key that is no flag
  // of this program, a list for a single value, a value of the wrong type); empty when all
  // is well. Keys after a bad one are still applied.
  std::vector<std::string> Apply();

  // Where the value of `key` came from, for error messages: "PATH:LINE" when the file set
  // it, "--KEY" when the command line did, "--KEY (default)" otherwise.
  std::string Where(std::string_view key) const;
  // "WHERE: " + message, the form every configuration error takes.
  std::string Error(std::string_view key, std::string_view message) const;

  bool check_only() const { return check_only_; }
  // The file Apply() read; empty when there was none.
  const std::string& path() const { return read_path_; }

  // Every key of the program with its effective value, as YAML a config file could hold,
  // each with a comment saying where the value came from. Lists print as [a, b].
  std::string Effective() const;

 private:
  struct Origin {
    std::string key;
    int line = 0;
  };
  const CLI::Option* FindKey(std::string_view key) const;
  static std::string KeyOf(const CLI::Option& option);

  CLI::App& app_;
  std::string default_path_;
  std::string config_path_;
  std::string read_path_;
  bool check_only_ = false;
  std::vector<Origin> from_file_;
};

}  // namespace longhaul::config

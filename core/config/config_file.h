// The daemons' configuration files: a YAML mapping of flag names (without the dashes) to a
// scalar or a list of scalars, e.g.
//
//   listen: 0.0.0.0:7070
//   http-host: [coord.example.org]
//
// Reading checks the shape only; what each key means and whether its value fits is up to
// the program that binds the file to its flags (core/config/cli_config.h).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::config {

struct ConfigEntry {
  std::string key;
  std::vector<std::string> values;  // exactly one for a scalar
  bool sequence = false;            // written as a list
  int line = 0;                     // 1-based position of the key in the file
  int column = 0;
};

struct ConfigFile {
  std::string path;
  std::vector<ConfigEntry> entries;  // in file order
};

// Parses `text` as the config file `path` (used in messages only). An empty file or one of
// comments only has no entries. InvalidArgument with one "PATH:LINE:COL: what" line per
// problem: a YAML syntax error, a top level that is not a mapping, a key given twice, a
// value that is a mapping, a list or a null inside a list, a value left empty.
Result<ConfigFile> ParseConfigText(const std::string& text, const std::string& path);

// Reads and parses the file; errors name the path.
Result<ConfigFile> ReadConfigFile(const std::string& path);

}  // namespace longhaul::config

// Checks of configuration values that the daemons share (`--check-config`, and every start).
// Each only looks: nothing is created, opened for writing or bound. Errors say what is wrong
// with the value; the caller adds which key it came from (CliConfig::Error).
#pragma once

#include <string>

#include "core/status.h"

namespace longhaul {

// "HOST:PORT" (HOST may be a name, an IPv4 address or [IPv6]; PORT 0..65535) checked for
// shape; InvalidArgument otherwise.
Status CheckHostPort(const std::string& target);

// A directory the process could use: an existing directory it may write into, or a path
// whose nearest existing parent is such a directory (so mkdir -p would succeed).
Status CheckDirUsable(const std::string& path);

// A file the process can open for reading.
Status CheckReadable(const std::string& path);

// A level SetupLogging knows: trace, debug, info, warn, error, critical or off.
Status CheckLogLevel(const std::string& level);

}  // namespace longhaul

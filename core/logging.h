// Logging set-up. Each binary's main() calls SetupLogging once; libraries then take their
// component's logger with GetLogger("scheduler") and never install sinks themselves.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace longhaul {

// Sends every logger to stderr (and to `file` when non-empty) at `level` ("debug", "info",
// "warn", "error"). Unknown level names mean "info".
void SetupLogging(std::string_view level, const std::string& file = "");

// The named logger, created on first use with the sinks SetupLogging installed.
std::shared_ptr<spdlog::logger> GetLogger(const std::string& name);

}  // namespace longhaul

// Durations as written in workflow files and flags: "250ms", "30s", "10m", "24h", "1h30m",
// "2d"; a bare number is seconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul {

// Returns milliseconds, or InvalidArgument naming what was wrong with `text`.
Result<int64_t> ParseDurationMs(std::string_view text);

// "350ms", "42s", "5m07s", "3h05m", "2d04h": short, for tables.
std::string FormatDurationMs(int64_t ms);
// A whole number of days, hours or minutes as a flag would give it ("30d", "36h", "90m");
// FormatDurationMs otherwise.
std::string FormatWholeDurationMs(int64_t ms);

}  // namespace longhaul

// Reading a slice of a stage's log for ReadLog.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace longhaul::agent {

struct LogSlice {
  std::string data;
  int64_t offset = 0;  // where `data` starts in the file
  int64_t size = 0;    // the file's size when read
};

// Reads up to `max_bytes` of `path` from `offset`; a negative offset counts from the end
// (-4096: the last 4 KiB). An offset past the end gives no data. NotFound if the file is
// missing; PermissionDenied if `path` is a symlink or not a regular file (never followed).
Result<LogSlice> ReadLogSlice(const std::string& path, int64_t offset, int64_t max_bytes);

}  // namespace longhaul::agent

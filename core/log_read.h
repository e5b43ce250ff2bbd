// The one bound on reading a stage's log, shared by every reader: ReadLog over gRPC, the HTTP
// log endpoint (its download pages through the log in reads of this size) and the agent,
// which answers the read (docs/http-api.md, docs/cli.md). A larger max_bytes is clamped, not
// refused: the answer's next offset says where the next read starts.
#pragma once

#include <algorithm>
#include <cstdint>

namespace longhaul {

// What one read returns when max_bytes is 0 or negative.
inline constexpr int64_t kDefaultLogReadBytes = 64 * 1024;
// The most one read returns: well under gRPC's default 4 MiB message limit.
inline constexpr int64_t kMaxLogReadBytes = 1024 * 1024;

// `max_bytes` as every reader takes it: <= 0 is the default, above the bound is the bound.
inline int64_t ClampLogReadBytes(int64_t max_bytes) {
  return max_bytes <= 0 ? kDefaultLogReadBytes : std::min(max_bytes, kMaxLogReadBytes);
}

}  // namespace longhaul

// The git work tree a workflow file lives in, as `submit` records it with the run (docs/cli.md,
// "submit"): commit, branch, dirty or not, and for a dirty tree the SHA-256 of `git diff HEAD`
// and its first kSourceDiffLimit bytes. git runs as a subprocess with a deadline; no git, no
// repository, a failure or a timeout is recorded as such (SourceState.kind), never an error.
#pragma once

#include <cstdint>
#include <string>

#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

inline constexpr int64_t kSourceDiffLimit = 256 << 10;

// `file` is the workflow file (any path); `git` the program to run (searched on PATH);
// `timeout_ms` the deadline of each git call.
v1::SourceState ReadSourceState(const std::string& file, const std::string& git = "git",
                                int64_t timeout_ms = 5'000);

// "abc123def456 (main, dirty: diff 3f2a...) in /src/repo", for `show`'s header.
std::string SourceStateLine(const v1::SourceState& s);

}  // namespace longhaul::cli

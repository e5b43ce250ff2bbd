// Retention on the agent: removing (or measuring) what ended attempts left on this node, for
// the coordinator's RemoveAttempts. Pure file-system work, off the agent's event loop.
#pragma once

#include <string>

#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

// For each attempt id: STATE/attempts/ID is removed only when it has `done` (the coordinator
// holds its exit); a live one, or one without `done`, is left and named in `errors`. Each
// output dir is removed only when it lies strictly inside `data_dir` (after resolving `..`
// and symlinks of its parents); any other path is refused and named. A path that is already
// gone counts as removed, with 0 bytes. `bytes` is the disk space the removed trees used
// (st_blocks), measured before removing; a dry run measures and removes nothing.
v1::AttemptsRemoved RemoveAttemptFiles(const v1::RemoveAttempts& req, const std::string& state_dir,
                                       const std::string& data_dir);

// Disk space (st_blocks * 512) of everything under `path`, not following symlinks; 0 when it
// does not exist.
int64_t DiskUsage(const std::string& path);

}  // namespace longhaul::agent

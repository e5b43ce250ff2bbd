// Small file-system helpers shared by every binary. All return a Status that names the path
// and the errno text.
#pragma once

#include <string>
#include <string_view>

#include "core/atomic_file.h"
#include "core/status.h"

namespace longhaul {

Result<std::string> ReadFile(const std::string& path);

// Writes `data` to a temporary file beside `path` and renames it over `path`, so a reader sees
// the old content or the new one, never a torn or partial file; a failed write leaves `path`
// as it was and no temporary file. With kFsync (the default) the file and then its directory
// are fsynced, so the new content survives a crash of the machine too (core/atomic_file.h).
// The error names the step and the path: "write /d/f.tmp.123: No space left on device".
Status WriteFileAtomic(const std::string& path, std::string_view data,
                       Durability durability = Durability::kFsync);

// mkdir -p.
Status MakeDirs(const std::string& path);

bool PathExists(const std::string& path);

// Status for a failed system call: "<what> <path>: <strerror(errno)>".
Status ErrnoStatus(std::string_view what, std::string_view path, int err);

}  // namespace longhaul

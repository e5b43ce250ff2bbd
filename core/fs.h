// Small file-system helpers shared by every binary. All return a Status that names the path
// and the errno text.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul {

Result<std::string> ReadFile(const std::string& path);

// Writes `data` to a temporary file beside `path`, fsyncs it, and renames it over `path`, so
// a reader sees the old content or the new one, never a torn file.
Status WriteFileAtomic(const std::string& path, std::string_view data);

// mkdir -p.
Status MakeDirs(const std::string& path);

bool PathExists(const std::string& path);

// Status for a failed system call: "<what> <path>: <strerror(errno)>".
Status ErrnoStatus(std::string_view what, std::string_view path, int err);

}  // namespace longhaul

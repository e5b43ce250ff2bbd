// Whether the agent's state directory has room (docs/operations.md, "A full disk"). Full when
// statvfs says fewer than `min_free_bytes` are free to unprivileged writers, or a write there
// failed with ENOSPC/EDQUOT; clear again once statvfs says at least `min_free_bytes` are free.
// Check and NoteWriteError return the change, so that the caller logs one line when an episode
// starts and one when it ends, never one per failed write.
//
// Check and NoteWriteError are for the agent's event loop; full() and free_bytes() may be read
// from any thread (what an agent-side /metrics would show).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace longhaul::agent {

class DiskWatch {
 public:
  enum class Change { kNone, kBecameFull, kCleared };

  DiskWatch(std::string dir, int64_t min_free_bytes);

  // Looks at the file system now (statvfs). A statvfs that fails changes nothing.
  Change Check();
  // A write under the directory failed with `err`: ENOSPC or EDQUOT make it full now.
  Change NoteWriteError(int err);

  bool full() const { return full_.load(std::memory_order_relaxed); }
  // Bytes free to unprivileged writers at the last Check; -1 before the first.
  int64_t free_bytes() const { return free_bytes_.load(std::memory_order_relaxed); }
  int64_t min_free_bytes() const { return min_free_bytes_; }
  const std::string& dir() const { return dir_; }

 private:
  const std::string dir_;
  const int64_t min_free_bytes_;
  std::atomic<bool> full_ = false;
  std::atomic<int64_t> free_bytes_ = -1;
};

}  // namespace longhaul::agent

#include "agent/lib/disk_watch.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <utility>

namespace longhaul::agent {

DiskWatch::DiskWatch(std::string dir, int64_t min_free_bytes)
    : dir_(std::move(dir)), min_free_bytes_(min_free_bytes) {}

DiskWatch::Change DiskWatch::Check() {
  struct statvfs st;
  if (::statvfs(dir_.c_str(), &st) != 0) return Change::kNone;
  int64_t free = static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize);
  free_bytes_ = free;
  bool now_full = free < min_free_bytes_;
  if (now_full == full()) return Change::kNone;
  full_ = now_full;
  return now_full ? Change::kBecameFull : Change::kCleared;
}

DiskWatch::Change DiskWatch::NoteWriteError(int err) {
  if ((err != ENOSPC && err != EDQUOT) || full()) return Change::kNone;
  full_ = true;
  return Change::kBecameFull;
}

}  // namespace longhaul::agent

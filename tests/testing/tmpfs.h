// A small tmpfs mounted for one test, to see what longhaul does on a full disk. Mounting needs
// root (or CAP_SYS_ADMIN); where it is not permitted, ok() is false and error() says why, for
// GTEST_SKIP. Unmounted (lazily, so a process still in it does not keep it) and its mount point
// removed when it goes out of scope: declare it before whatever runs processes in it.
#pragma once

#include <cstdint>
#include <string>

namespace longhaul::testing {

class TmpfsMount {
 public:
  explicit TmpfsMount(int64_t size_bytes);
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool ok() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& rel) const { return path_ + "/" + rel; }

  // Fills the file system with `file` (under path()) until a write fails; returns the errno of
  // that write (ENOSPC when it is full).
  int Fill(const std::string& file) const;

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

}  // namespace longhaul::testing

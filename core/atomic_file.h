// The one atomic file writer: the data goes to a temporary file beside the target
// (PATH.tmp.PID), which is renamed over it, so a reader (or a process restarted after any
// other was killed) sees the old content or the new one, never a torn or partial file. A write
// that fails removes its temporary file and leaves the target as it was.
//
// With Durability::kFsync the file is fsynced before the rename and its directory after it, so
// the new content also survives a crash of the machine. Without (kRenameOnly), only the rename
// orders things: enough against killed processes, which is all the agent's attempt files need
// (docs/architecture.md, "Durability of the agent's files").
//
// Inline and plain POSIX on purpose, like core/utf8.h: longhaul-shim (no longhaul libraries)
// uses it as it is; everyone else calls core/fs.h's WriteFileAtomic, which returns a Status.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

namespace longhaul {

enum class Durability { kRenameOnly, kFsync };

// What failed: the call ("create", "write", "fsync", "rename to", "fsync the directory of")
// and the path it was given.
struct AtomicWriteFailure {
  const char* step = "";
  std::string path;
};

// Returns 0, or the errno value of the step that failed (described in *failure when given).
inline int WriteFileAtomicErrno(const std::string& path, std::string_view data,
                                Durability durability, AtomicWriteFailure* failure = nullptr) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const char* step, const std::string& at, int err, bool remove_tmp) {
    if (remove_tmp) ::unlink(tmp.c_str());
    if (failure != nullptr) *failure = {step, at};
    return err;
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("create", tmp, errno, false);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // 0: nothing written (the disk is full), do not spin
      int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      return fail("write", tmp, err, true);
    }
    off += static_cast<size_t>(n);
  }
  if (durability == Durability::kFsync && ::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    return fail("fsync", tmp, err, true);
  }
  if (::close(fd) != 0 && errno != EINTR) return fail("write", tmp, errno, true);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename to", path, errno, true);
  if (durability == Durability::kFsync) {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return fail("fsync the directory of", path, errno, false);
    int rc = ::fsync(dfd);
    int err = errno;
    ::close(dfd);
    // EINVAL: a file system whose directories cannot be fsynced; the rename is all there is.
    if (rc != 0 && err != EINVAL) return fail("fsync the directory of", path, err, false);
  }
  return 0;
}

}  // namespace longhaul

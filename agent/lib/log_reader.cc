#include "agent/lib/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {

Result<LogSlice> ReadLogSlice(const std::string& path, int64_t offset, int64_t max_bytes) {
  // A stage could plant a symlink (to a file it may not read, through the agent) or a FIFO
  // (which would block the agent) where its log belongs: neither is followed nor read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP) {
    return absl::PermissionDeniedError(
        StrCat(path, " is a symlink; logs are not read through one"));
  }
  if (fd < 0) return ErrnoStatus("open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::PermissionDeniedError(StrCat(path, " is not a regular file"));
  }
  LogSlice slice;
  slice.size = st.st_size;
  slice.offset = offset < 0 ? std::max<int64_t>(0, slice.size + offset) : offset;
  int64_t want = std::max<int64_t>(0, std::min(max_bytes, slice.size - slice.offset));
  slice.data.resize(static_cast<size_t>(want));
  int64_t got = 0;
  while (got < want) {
    ssize_t n =
        ::pread(fd, slice.data.data() + got, static_cast<size_t>(want - got), slice.offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("read", path, err);
    }
    if (n == 0) break;
    got += n;
  }
  slice.data.resize(static_cast<size_t>(got));
  ::close(fd);
  return slice;
}

}  // namespace longhaul::agent

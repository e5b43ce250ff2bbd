#include "tests/testing/tmpfs.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace longhaul::testing {

TmpfsMount::TmpfsMount(int64_t size_bytes) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/lhfs.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    error_ = "mkdtemp " + tmpl + ": " + std::strerror(errno);
    return;
  }
  path_ = buf.data();
  std::string opts = "size=" + std::to_string(size_bytes) + ",mode=0755";
  if (::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
    error_ = "cannot mount a tmpfs on " + path_ + " (" + std::strerror(errno) +
             "): the test needs root or CAP_SYS_ADMIN";
    ::rmdir(path_.c_str());
    return;
  }
  mounted_ = true;
}

TmpfsMount::~TmpfsMount() {
  if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  if (!path_.empty()) ::rmdir(path_.c_str());
}

int TmpfsMount::Fill(const std::string& file) const {
  int fd = ::open(Join(file).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  std::vector<char> block(64 * 1024, 'x');
  for (;;) {
    ssize_t n = ::write(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return err;
    }
    if (n < static_cast<ssize_t>(block.size())) {
      // A short write: the last bytes fit; the next write says why no more do.
      continue;
    }
  }
}

}  // namespace longhaul::testing

#include "agent/shim/shim_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace longhaul::shim {

int64_t WallMs() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

int64_t ProcStartTime(pid_t pid) {
  std::string stat;
  if (!ReadSmallFile("/proc/" + std::to_string(pid) + "/stat", &stat)) return -1;
  // The command name (field 2) may hold spaces and parentheses; fields resume after the last ')'.
  size_t pos = stat.rfind(')');
  if (pos == std::string::npos) return -1;
  int field = 2;
  const char* p = stat.c_str() + pos + 1;
  while (*p != '\0') {
    while (*p == ' ') ++p;
    if (*p == '\0') break;
    ++field;
    if (field == 22) return std::strtoll(p, nullptr, 10);
    while (*p != ' ' && *p != '\0') ++p;
  }
  return -1;
}

namespace {

// Writes all of `data` to `fd`; 0 or an errno value.
int WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;  // 0: nothing written, do not spin
    off += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

PreparedFile::PreparedFile(const std::string& dir, int64_t reserve)
    : fd_(::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644)) {
  if (fd_ < 0) {
    reserve_error_ = errno;
    return;
  }
  if (reserve <= 0) return;
  // fallocate first: on a copy-on-write file system (btrfs) only a preallocated extent is
  // written in place; an overwrite of written data would need new blocks.
  int err = 0;
  while (::fallocate(fd_, 0, 0, reserve) != 0) {
    err = errno;
    if (err != EINTR) break;
    err = 0;
  }
  if (err == EOPNOTSUPP || err == ENOSYS) {
    err = WriteAll(fd_, std::string(static_cast<size_t>(reserve), ' '));
  }
  if (err != 0) {
    reserve_error_ = err;
    if (::ftruncate(fd_, 0) != 0) reserve_error_ = errno;  // what a short write left behind
    return;
  }
  reserved_ = reserve;
}

PreparedFile::~PreparedFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool PreparedFile::Publish(const std::string& path, const std::string& data) {
  if (fd_ < 0) return false;
  int fd = fd_;
  fd_ = -1;
  bool ok;
  if (static_cast<int64_t>(data.size()) <= reserved_) {
    // Inside the reservation: neither write needs a new block.
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::pwrite(fd, data.data() + off, data.size() - off, static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ok = off == data.size() && ::ftruncate(fd, static_cast<off_t>(data.size())) == 0;
  } else {
    ok = ::ftruncate(fd, 0) == 0 && WriteAll(fd, data) == 0;
  }
  // linkat(fd, "", ..., AT_EMPTY_PATH) would need CAP_DAC_READ_SEARCH; the /proc link does not.
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  ok = ok && ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0;
  ::close(fd);  // unlinked (not published): the kernel frees it
  return ok;
}

bool ReadSmallFile(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out->clear();
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return n == 0;
    }
    out->append(buf, static_cast<size_t>(n));
  }
}

namespace {

// Position just after `"key"` and its colon, or npos.
size_t ValueStart(const std::string& json, const std::string& key) {
  std::string quoted = "\"" + key + "\"";
  size_t pos = json.find(quoted);
  if (pos == std::string::npos) return pos;
  pos += quoted.size();
  while (pos < json.size() && (json[pos] == ' ' || json[pos] == '\t' || json[pos] == '\n')) ++pos;
  if (pos >= json.size() || json[pos] != ':') return std::string::npos;
  ++pos;
  while (pos < json.size() && (json[pos] == ' ' || json[pos] == '\t' || json[pos] == '\n')) ++pos;
  return pos;
}

}  // namespace

bool JsonFindString(const std::string& json, const std::string& key, std::string* out) {
  size_t pos = ValueStart(json, key);
  if (pos == std::string::npos || pos >= json.size() || json[pos] != '"') return false;
  out->clear();
  for (++pos; pos < json.size(); ++pos) {
    char c = json[pos];
    if (c == '"') return true;
    if (c != '\\') {
      *out += c;
      continue;
    }
    if (++pos >= json.size()) return false;
    switch (json[pos]) {
      case 'n':
        *out += '\n';
        break;
      case 't':
        *out += '\t';
        break;
      case 'r':
        *out += '\r';
        break;
      case 'b':
        *out += '\b';
        break;
      case 'f':
        *out += '\f';
        break;
      case 'u': {
        // Only what the agent's writer emits for control characters (\u00XX) is decoded.
        if (pos + 4 >= json.size()) return false;
        long cp = std::strtol(json.substr(pos + 1, 4).c_str(), nullptr, 16);
        *out += cp < 0x80 ? static_cast<char>(cp) : '?';
        pos += 4;
        break;
      }
      default:
        *out += json[pos];
        break;
    }
  }
  return false;
}

bool JsonFindInt(const std::string& json, const std::string& key, int64_t* out) {
  size_t pos = ValueStart(json, key);
  if (pos == std::string::npos || pos >= json.size()) return false;
  char* end = nullptr;
  long long v = std::strtoll(json.c_str() + pos, &end, 10);
  if (end == json.c_str() + pos) return false;
  *out = v;
  return true;
}

}  // namespace longhaul::shim

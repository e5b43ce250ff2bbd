#include "core/config/config_checks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul {

Status CheckHostPort(const std::string& target) {
  auto colon = target.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == target.size()) {
    return absl::InvalidArgumentError(StrCat("address '", target, "': expected HOST:PORT"));
  }
  std::string port = target.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    return absl::InvalidArgumentError(
        StrCat("address '", target, "': the port must be a number from 0 to 65535"));
  }
  std::string host = target.substr(0, colon);
  if (host.front() == '[' ? host.back() != ']' : host.find(':') != std::string::npos) {
    return absl::InvalidArgumentError(
        StrCat("address '", target, "': write an IPv6 host in brackets, as [::1]:PORT"));
  }
  return OkStatus();
}

Status CheckDirUsable(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("the directory is empty");
  std::string dir = path;
  struct stat st;
  while (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return ErrnoStatus("cannot look at", dir, errno);
    auto slash = dir.find_last_of('/');
    if (slash == std::string::npos) {
      dir = ".";
    } else {
      dir = slash == 0 ? "/" : dir.substr(0, slash);
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        StrCat(dir == path ? dir : StrCat(path, ": ", dir), " is not a directory"));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return ErrnoStatus(dir == path ? "cannot write into" : "cannot create a directory in", dir,
                       errno);
  }
  return OkStatus();
}

Status CheckReadable(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot read", path, errno);
  ::close(fd);
  return OkStatus();
}

Status CheckLogLevel(const std::string& level) {
  for (const char* known : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    if (level == known) return OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("'", level, "': expected trace, debug, info, warn, error, critical or off"));
}

}  // namespace longhaul

#include "agent/lib/agent_setup.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {

Result<std::string> ResolveAgentId(const std::string& state_dir, const std::string& flag_id) {
  std::string path = state_dir + "/agent_id";
  auto stored = ReadFile(path);
  if (stored.ok()) {
    std::string id(StripWhitespace(*stored));
    if (id.empty()) return absl::InvalidArgumentError(StrCat(path, " is empty"));
    if (!flag_id.empty() && flag_id != id) {
      return absl::FailedPreconditionError(
          StrCat("the state dir ", state_dir, " belongs to agent '", id, "', not '", flag_id,
                 "' (its attempts would be reported under the wrong name; use another --state-dir"
                 " or remove ",
                 path, ")"));
    }
    return id;
  }
  if (!absl::IsNotFound(stored.status())) return stored.status();
  std::string id = flag_id.empty() ? Hostname() : flag_id;
  if (id.empty()) return absl::InvalidArgumentError("no --id given and no host name to use");
  RETURN_IF_ERROR(WriteFileAtomic(path, id + "\n"));
  return id;
}

Result<int> LockStateDir(const std::string& state_dir) {
  std::string path = state_dir + "/agent.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return absl::FailedPreconditionError(
        StrCat("another longhaul-agent uses the state dir ", state_dir, " (", path, " is locked)"));
  }
  return fd;
}

Result<std::pair<std::string, std::string>> ParseLabel(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(StrCat("--label '", text, "': expected KEY=VALUE"));
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

std::string SelfBinDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  auto slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

std::string Hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace longhaul::agent

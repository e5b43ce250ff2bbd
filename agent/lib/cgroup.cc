#include "agent/lib/cgroup.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <vector>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

constexpr char kAttemptsDirName[] = "longhaul-attempts";
constexpr char kAgentLeafName[] = "agent";

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string UnescapeMountField(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto octal = [&](size_t k) { return s[k] >= '0' && s[k] <= '7'; };
    if (s[i] == '\\' && i + 3 < s.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string CgroupParentDir(const std::string& dir) {
  size_t slash = dir.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

std::string CgroupBaseName(const std::string& dir) {
  size_t slash = dir.rfind('/');
  return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

bool IsCgroup2Dir(const std::string& dir) {
  struct statfs s;
  return ::statfs(dir.c_str(), &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC;
}

bool Writable(const std::string& dir) {
  return ::access(dir.c_str(), W_OK) == 0 && ::access((dir + "/cgroup.procs").c_str(), W_OK) == 0;
}

Status WriteCgroupFile(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  ::close(fd);
  return ok ? OkStatus() : ErrnoStatus("write", path, err);
}

bool HasWord(const std::string& text, std::string_view word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// Enables memory and cpu for `dir`'s children where `dir` has them; best effort (a cgroup
// with processes in it cannot, the rule above).
void EnableAccounting(const std::string& dir) {
  auto controllers = ReadFile(dir + "/cgroup.controllers");
  if (!controllers.ok()) return;
  for (const char* c : {"memory", "cpu"}) {
    if (HasWord(*controllers, c))
      (void)WriteCgroupFile(dir + "/cgroup.subtree_control", StrCat("+", c));
  }
}

// The agent alone in its cgroup (cgroup.procs lists one process: this one).
bool AloneIn(const std::string& dir) {
  auto procs = ReadFile(dir + "/cgroup.procs");
  if (!procs.ok()) return false;
  std::istringstream in(*procs);
  std::string pid, more;
  return static_cast<bool>(in >> pid) && pid == std::to_string(::getpid()) && !(in >> more);
}

Status MakeCgroup(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return ErrnoStatus("cannot make", dir, errno);
  return OkStatus();
}

// The base cgroup for --cgroup-root auto: the agent's own, or the one above its `agent` leaf.
Result<std::string> AutoBase(std::string* moved) {
  auto mountinfo = ReadFile("/proc/self/mountinfo");
  if (!mountinfo.ok()) return mountinfo.status();
  ASSIGN_OR_RETURN(Cgroup2Mount mount, FindCgroup2Mount(*mountinfo));
  auto self = ReadFile("/proc/self/cgroup");
  if (!self.ok()) return self.status();
  ASSIGN_OR_RETURN(std::string own, ParseOwnCgroup(*self));
  ASSIGN_OR_RETURN(std::string dir, CgroupDirectory(mount, own));
  if (own == mount.root) return dir;  // the root cgroup (of this view): exempt from the rule
  std::string above = CgroupParentDir(dir);
  if (CgroupBaseName(dir) == kAgentLeafName && above.size() > mount.point.size() &&
      Writable(above)) {
    return above;
  }
  if (!Writable(dir)) {
    return absl::PermissionDeniedError(
        StrCat("no write access to ", dir,
               " (give the agent a cgroup of its own: systemd's Delegate=yes)"));
  }
  if (AloneIn(dir)) {
    std::string leaf = StrCat(dir, "/", kAgentLeafName);
    if (MakeCgroup(leaf).ok() &&
        WriteCgroupFile(leaf + "/cgroup.procs", std::to_string(::getpid())).ok()) {
      *moved = leaf;
    }
  }
  return dir;
}

}  // namespace

Result<Cgroup2Mount> FindCgroup2Mount(std::string_view mountinfo) {
  std::istringstream in{std::string(mountinfo)};
  std::string line;
  while (std::getline(in, line)) {
    // ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
    size_t sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream tail(line.substr(sep + 3));
    std::string fstype;
    if (!(tail >> fstype) || fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, sep));
    std::string id, parent, dev, root, point;
    if (!(head >> id >> parent >> dev >> root >> point)) continue;
    return Cgroup2Mount{UnescapeMountField(point), UnescapeMountField(root)};
  }
  return absl::NotFoundError("cgroup v2 not mounted");
}

Result<std::string> ParseOwnCgroup(std::string_view proc_self_cgroup) {
  std::istringstream in{std::string(proc_self_cgroup)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0 && line.size() > 3 && line[3] == '/') return line.substr(3);
  }
  return absl::NotFoundError("no cgroup v2 entry (\"0::PATH\") in /proc/self/cgroup");
}

Result<std::string> CgroupDirectory(const Cgroup2Mount& mount, const std::string& path) {
  std::string rel;
  if (mount.root == "/") {
    rel = path;
  } else if (path == mount.root) {
    rel = "/";
  } else if (path.rfind(mount.root + "/", 0) == 0) {
    rel = path.substr(mount.root.size());
  } else {
    return absl::NotFoundError(StrCat("cgroup ", path, " is not under the cgroup2 mount at ",
                                      mount.point, " (its root is ", mount.root, ")"));
  }
  return rel == "/" ? mount.point : mount.point + rel;
}

AttemptCgroups SetUpAttemptCgroups(const std::string& flag) {
  constexpr char kFallback[] = "; leftovers are found through /proc";
  if (flag == "none") return {"", StrCat("no cgroups (--cgroup-root none)", kFallback)};
  std::string parent, moved;
  if (flag == "auto") {
    auto base = AutoBase(&moved);
    if (!base.ok()) return {"", StrCat("no cgroups: ", base.status().message(), kFallback)};
    // Not after a move: a restart puts the next agent in `base` again, which the kernel
    // refuses while controllers are enabled for its children.
    if (moved.empty()) EnableAccounting(*base);
    parent = StrCat(*base, "/", kAttemptsDirName);
    if (Status s = MakeCgroup(parent); !s.ok()) {
      return {"", StrCat("no cgroups: ", s.message(), kFallback)};
    }
  } else {
    parent = flag;
    // Made only inside a cgroup2 hierarchy: never a stray directory elsewhere.
    if (!PathExists(parent) && IsCgroup2Dir(CgroupParentDir(parent))) {
      if (Status s = MakeCgroup(parent); !s.ok()) {
        return {"", StrCat("no cgroups: ", s.message(), kFallback)};
      }
    }
    if (!IsCgroup2Dir(parent)) {
      return {"", StrCat("no cgroups: ", parent, " is not a cgroup v2 directory", kFallback)};
    }
  }
  // An existing one may belong to someone else (another agent's, made as root).
  if (!Writable(parent)) return {"", StrCat("no cgroups: no write access to ", parent, kFallback)};
  EnableAccounting(parent);
  auto enabled = ReadFile(parent + "/cgroup.subtree_control");
  bool memory = enabled.ok() && HasWord(*enabled, "memory");
  return {parent,
          StrCat("attempts run in cgroups under ", parent,
                 memory ? " (memory and CPU accounted)"
                        : " (CPU time accounted; memory not: no memory controller here)",
                 moved.empty() ? ""
                               : StrCat("; the agent moved itself into ", moved,
                                        " and left the controllers off (start it there, "
                                        "systemd's DelegateSubgroup=agent, to have them)"))};
}

std::string AttemptCgroupName(int64_t attempt_id, const std::string& attempt_dir) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : attempt_dir) h = (h ^ c) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", h);
  return StrCat("attempt-", attempt_id, "-", hex);
}

}  // namespace longhaul::agent

#include "tests/agent/cgroup_test_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "agent/lib/cgroup.h"
#include "agent/shim/attempt_cgroup.h"
#include "core/fs.h"
#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {

TestCgroup::TestCgroup() {
  auto mountinfo = ReadFile("/proc/self/mountinfo");
  auto self = ReadFile("/proc/self/cgroup");
  if (!mountinfo.ok() || !self.ok()) {
    skip_reason_ = "cannot read /proc/self/mountinfo or /proc/self/cgroup";
    return;
  }
  auto mount = agent::FindCgroup2Mount(*mountinfo);
  auto own = agent::ParseOwnCgroup(*self);
  if (!mount.ok() || !own.ok()) {
    skip_reason_ = StrCat("no cgroup v2 here: ",
                          !mount.ok() ? mount.status().message() : own.status().message());
    return;
  }
  auto parent = agent::CgroupDirectory(*mount, *own);
  if (!parent.ok()) {
    skip_reason_ = StrCat("no cgroup v2 here: ", parent.status().message());
    return;
  }
  static std::atomic<int> counter{0};
  std::string dir = StrCat(*parent, "/longhaul-test-", ::getpid(), "-", counter++);
  if (::mkdir(dir.c_str(), 0755) != 0) {
    skip_reason_ = StrCat("cgroup v2 at ", mount->point, " is not writable here (mkdir ", dir, ": ",
                          std::strerror(errno), ")");
    return;
  }
  // Memory accounted where this cgroup can have it; best effort, as the agent does.
  if (auto c = ReadFile(dir + "/cgroup.controllers");
      c.ok() && c->find("memory") != std::string::npos) {
    WriteTextFile(dir + "/cgroup.subtree_control", "+memory");
  }
  dir_ = dir;
}

TestCgroup::~TestCgroup() {
  if (dir_.empty()) return;
  std::string error;
  shim::KillCgroup(
      dir_, 5000, [] {}, nullptr, &error);
}

bool TestCgroup::accounts_memory() const {
  return ReadTextFile(dir_ + "/cgroup.subtree_control").find("memory") != std::string::npos;
}

std::string CgroupOf(pid_t pid) {
  auto path = agent::ParseOwnCgroup(ReadTextFile(StrCat("/proc/", pid, "/cgroup")));
  return path.ok() ? *path : "";
}

}  // namespace longhaul::testing

// A cgroup v2 directory of a test's own, for the tests of attempts in cgroups: made below the
// test process's cgroup, and at the end emptied (cgroup.kill) and removed with what is below
// it. Where cgroup v2 is not mounted or not writable, ok() is false and skip_reason() says
// why: those tests GTEST_SKIP() with it.
#pragma once

#include <string>

namespace longhaul::testing {

class TestCgroup {
 public:
  TestCgroup();
  ~TestCgroup();
  TestCgroup(const TestCgroup&) = delete;
  TestCgroup& operator=(const TestCgroup&) = delete;

  bool ok() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  const std::string& skip_reason() const { return skip_reason_; }
  // The memory controller is enabled for this cgroup's children: they account memory.
  bool accounts_memory() const;

 private:
  std::string dir_;
  std::string skip_reason_;
};

// The cgroup (v2) path /proc/PID/cgroup names, "" when none.
std::string CgroupOf(pid_t pid);

}  // namespace longhaul::testing

// Where the agent finds cgroup v2 and its own cgroup (fixtures of /proc/self/mountinfo and
// /proc/self/cgroup), what --cgroup-root resolves to, and the attempt cgroup's files.
#include "agent/lib/cgroup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/shim/attempt_cgroup.h"
#include "core/fs.h"
#include "tests/agent/cgroup_test_util.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

// This build machine's layout: v1 controllers, and v2 beside them at .../unified.
constexpr char kHybridMountinfo[] =
    "23 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr char kHybridCgroup[] =
    "9:name=systemd:/\n"
    "4:memory:/process_api/f3caaba6\n"
    "1:cpu:/\n"
    "0::/\n";

TEST(CgroupTest, FindsTheCgroup2MountBesideV1Ones) {
  auto m = FindCgroup2Mount(kHybridMountinfo);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m->root, "/");
}

TEST(CgroupTest, FindsAUnifiedMountWithOptionalFieldsAndEscapes) {
  // Optional fields (shared:N) before the separator; a space in the mount point as \040.
  auto m = FindCgroup2Mount(
      "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 master:1 - cgroup2 "
      "cgroup2 rw,nsdelegate,memory_recursiveprot\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->point, "/sys/fs/cgroup");
  auto spaced = FindCgroup2Mount("7 1 0:9 /ns\\040root /mnt/my\\040cgroups rw - cgroup2 none rw\n");
  ASSERT_TRUE(spaced.ok()) << spaced.status();
  EXPECT_EQ(spaced->point, "/mnt/my cgroups");
  EXPECT_EQ(spaced->root, "/ns root");
}

TEST(CgroupTest, NoCgroup2MountSaysSo) {
  auto m = FindCgroup2Mount(
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "garbage line without separator\n");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "cgroup v2 not mounted");
}

TEST(CgroupTest, OwnCgroupIsTheZeroLine) {
  auto own = ParseOwnCgroup(kHybridCgroup);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(*own, "/");
  auto svc = ParseOwnCgroup("0::/system.slice/longhaul-agent.service\n");
  ASSERT_TRUE(svc.ok());
  EXPECT_EQ(*svc, "/system.slice/longhaul-agent.service");
  auto v1_only = ParseOwnCgroup("4:memory:/x\n1:cpu:/\n");
  ASSERT_FALSE(v1_only.ok());
  EXPECT_NE(v1_only.status().message().find("no cgroup v2 entry"), std::string::npos);
}

TEST(CgroupTest, DirectoryIsTheMountPointPlusThePathBelowItsRoot) {
  Cgroup2Mount unified{"/sys/fs/cgroup", "/"};
  EXPECT_EQ(*CgroupDirectory(unified, "/"), "/sys/fs/cgroup");
  EXPECT_EQ(*CgroupDirectory(unified, "/system.slice/a.service"),
            "/sys/fs/cgroup/system.slice/a.service");
  // A mount of a subtree (a container's view): its root is cut off the path.
  Cgroup2Mount sub{"/sys/fs/cgroup", "/kubepods/pod1"};
  EXPECT_EQ(*CgroupDirectory(sub, "/kubepods/pod1"), "/sys/fs/cgroup");
  EXPECT_EQ(*CgroupDirectory(sub, "/kubepods/pod1/c"), "/sys/fs/cgroup/c");
  auto outside = CgroupDirectory(sub, "/kubepods/pod10");
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("not under the cgroup2 mount"), std::string::npos);
}

TEST(CgroupTest, AttemptNamesAreStableAndTellDirsApart) {
  std::string a = AttemptCgroupName(42, "/var/lib/longhaul/agent/attempts/42");
  EXPECT_EQ(a, AttemptCgroupName(42, "/var/lib/longhaul/agent/attempts/42"));
  EXPECT_EQ(a.rfind("attempt-42-", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("attempt-42-").size() + 8);
  EXPECT_NE(a, AttemptCgroupName(42, "/tmp/other-agent/attempts/42"));
}

TEST(CgroupTest, CpuStatUsage) {
  EXPECT_EQ(shim::ParseCpuStatUsage("usage_usec 7094\nuser_usec 3000\nsystem_usec 4094\n"), 7094);
  EXPECT_EQ(shim::ParseCpuStatUsage("nr_periods 0\nusage_usec 12\n"), 12);
  EXPECT_EQ(shim::ParseCpuStatUsage("xusage_usec 5\n"), -1);
  EXPECT_EQ(shim::ParseCpuStatUsage(""), -1);
}

TEST(CgroupTest, NoneTurnsThemOff) {
  AttemptCgroups c = SetUpAttemptCgroups("none");
  EXPECT_TRUE(c.parent.empty());
  EXPECT_EQ(c.note, "no cgroups (--cgroup-root none); leftovers are found through /proc");
}

TEST(CgroupTest, APathThatIsNoCgroupIsRefusedWithTheReason) {
  testing::TempDir tmp;
  AttemptCgroups c = SetUpAttemptCgroups(tmp.path());
  EXPECT_TRUE(c.parent.empty());
  EXPECT_NE(c.note.find(tmp.path() + " is not a cgroup v2 directory"), std::string::npos) << c.note;
  // A missing one is made only inside a cgroup2 hierarchy.
  AttemptCgroups missing = SetUpAttemptCgroups(tmp.Join("attempts"));
  EXPECT_TRUE(missing.parent.empty());
  EXPECT_NE(missing.note.find(tmp.Join("attempts") + " is not a cgroup v2 directory"),
            std::string::npos)
      << missing.note;
  EXPECT_FALSE(PathExists(tmp.Join("attempts")));
}

TEST(CgroupTest, AWritableCgroupIsUsedAsItIsAndAMissingOneMadeInIt) {
  testing::TestCgroup cg;
  if (!cg.ok()) GTEST_SKIP() << cg.skip_reason();
  AttemptCgroups c = SetUpAttemptCgroups(cg.dir());
  EXPECT_EQ(c.parent, cg.dir());
  EXPECT_NE(c.note.find("attempts run in cgroups under " + cg.dir()), std::string::npos) << c.note;
  AttemptCgroups below = SetUpAttemptCgroups(cg.dir() + "/attempts");
  EXPECT_EQ(below.parent, cg.dir() + "/attempts");
  EXPECT_TRUE(PathExists(cg.dir() + "/attempts/cgroup.procs"));
}

TEST(CgroupTest, KillCgroupEndsEverythingInItAndBelowThenRemovesIt) {
  testing::TestCgroup cg;
  if (!cg.ok()) GTEST_SKIP() << cg.skip_reason();
  std::string attempt = cg.dir() + "/attempt";
  // Moves `pid` into the cgroup `dir`, made if missing.
  auto place = [](const std::string& dir, pid_t pid) {
    int err = 0;
    int procs = shim::OpenCgroupProcs(dir, &err);
    if (procs < 0) return false;
    std::string text = std::to_string(pid);
    bool ok = ::write(procs, text.c_str(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(procs);
    return ok;
  };
  // Two sleepers: one in the attempt's cgroup, one in a cgroup of its own below it.
  auto a = testing::Subprocess::Start({"/bin/sleep", "1000"});
  auto b = testing::Subprocess::Start({"/bin/sleep", "1000"});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(place(attempt, (*a)->pid()));
  ASSERT_TRUE(place(attempt + "/below", (*b)->pid()));
  EXPECT_EQ(shim::CgroupProcesses(attempt).size(), 2u);

  std::string error;
  shim::CgroupUsage usage;
  auto reap = [&] {
    (*a)->Running();
    (*b)->Running();
  };
  EXPECT_EQ(shim::KillCgroup(attempt, 5000, reap, &usage, &error), 2) << error;
  EXPECT_EQ(error, "");
  EXPECT_FALSE(testing::ProcessAlive((*a)->pid()));
  EXPECT_FALSE(testing::ProcessAlive((*b)->pid()));
  EXPECT_FALSE(PathExists(attempt));
  EXPECT_GE(usage.cpu_usec, 0);  // cpu.stat is there without the cpu controller
  EXPECT_EQ(usage.memory_peak_bytes >= 0, cg.accounts_memory());
}

}  // namespace
}  // namespace longhaul::agent

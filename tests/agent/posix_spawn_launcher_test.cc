// PosixSpawnLauncher: what the started process inherits from the agent, and how a failed start
// is reported.
#include "agent/lib/posix_spawn_launcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

using testing::ReadTextFile;
using testing::SplitLines;

constexpr unsigned long long kGlibcInternalSignals = (1ULL << 31) | (1ULL << 32);  // 32, 33

std::optional<int> Reap(pid_t pid) {
  int st = 0;
  if (::waitpid(pid, &st, 0) != pid) return std::nullopt;
  return st;
}

TEST(PosixSpawnLauncherTest, StartsCleanInItsOwnSessionWithTheGivenEnvAndDir) {
  testing::TempDir tmp;
  std::string out = tmp.Join("report");
  // What the agent may have that the child must not get: an open descriptor without
  // O_CLOEXEC, an ignored SIGPIPE, a blocked signal.
  int leak = ::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(leak, 3);
  struct sigaction ign {
  }, old_pipe{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old_pipe);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask);

  LaunchSpec spec;
  spec.program = "/bin/sh";
  // $$ is the shell itself: fields 5 and 6 of its stat are its group and session.
  spec.args = {"-c",
               "exec >> \"$0\" 2>&1 < /dev/null; echo \"$MY_VAR\"; pwd; "
               "set -- $(cut -d' ' -f5,6 /proc/$$/stat); "
               "[ \"$1\" = $$ ] && [ \"$2\" = $$ ] && echo leader || echo \"not leader: $*\"; "
               "[ -e /proc/$$/fd/" +
                   std::to_string(leak) +
                   " ] && echo leaked || echo closed; "
                   "exec grep -E '^Sig(Blk|Ign)' /proc/self/status",
               out};
  spec.env = {"MY_VAR=mine", "PATH=/usr/bin:/bin", "=bad", "no-equals"};
  spec.cwd = tmp.path();
  spec.new_session = true;
  Result<pid_t> pid = PosixSpawnLauncher().Launch(spec);

  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ::close(leak);
  ASSERT_TRUE(pid.ok()) << pid.status();
  auto st = Reap(*pid);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 0);
  std::vector<std::string> lines = SplitLines(ReadTextFile(out));
  ASSERT_EQ(lines.size(), 6u) << ReadTextFile(out);
  EXPECT_EQ(lines[0], "mine");
  EXPECT_EQ(lines[1], tmp.path());
  EXPECT_EQ(lines[2], "leader");
  EXPECT_EQ(lines[3], "closed");
  EXPECT_EQ(lines[4], "SigBlk:\t0000000000000000");
  // glibc's posix_spawn leaves its two internal signals (32, 33) ignored; the shim resets them.
  ASSERT_TRUE(StartsWith(lines[5], "SigIgn:\t")) << lines[5];
  EXPECT_EQ(std::stoull(lines[5].substr(8), nullptr, 16) & ~kGlibcInternalSignals, 0u) << lines[5];
}

TEST(PosixSpawnLauncherTest, StdioIsDevNull) {
  testing::TempDir tmp;
  LaunchSpec spec;
  spec.program = "/bin/sh";
  // The shell's own descriptors, read before it redirects anything.
  spec.args = {"-c",
               "fds=$(readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2); echo \"$fds\" > \"$0\"",
               tmp.Join("fds")};
  Result<pid_t> pid = PosixSpawnLauncher().Launch(spec);
  ASSERT_TRUE(pid.ok()) << pid.status();
  ASSERT_TRUE(Reap(*pid).has_value());
  EXPECT_EQ(ReadTextFile(tmp.Join("fds")), "/dev/null\n/dev/null\n/dev/null\n");
}

TEST(PosixSpawnLauncherTest, WithoutNewSessionTheChildStaysInTheCallersSession) {
  testing::TempDir tmp;
  LaunchSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", "cut -d' ' -f6 /proc/$$/stat > \"$0\"", tmp.Join("sid")};
  Result<pid_t> pid = PosixSpawnLauncher().Launch(spec);
  ASSERT_TRUE(pid.ok()) << pid.status();
  ASSERT_TRUE(Reap(*pid).has_value());
  EXPECT_EQ(ReadTextFile(tmp.Join("sid")), std::to_string(::getsid(0)) + "\n");
}

TEST(PosixSpawnLauncherTest, MissingProgramIsNamedWithTheReason) {
  testing::TempDir tmp;
  LaunchSpec spec;
  spec.program = tmp.Join("no-such-shim");
  Result<pid_t> pid = PosixSpawnLauncher().Launch(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(),
            "cannot start " + tmp.Join("no-such-shim") + ": No such file or directory");
}

TEST(PosixSpawnLauncherTest, NonExecutableProgramIsPermissionDenied) {
  testing::TempDir tmp;
  testing::WriteTextFile(tmp.Join("plain"), "#!/bin/sh\n");
  LaunchSpec spec;
  spec.program = tmp.Join("plain");
  Result<pid_t> pid = PosixSpawnLauncher().Launch(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(), "cannot start " + tmp.Join("plain") + ": Permission denied");
}

TEST(PosixSpawnLauncherTest, MissingWorkingDirectoryIsNamed) {
  testing::TempDir tmp;
  LaunchSpec spec;
  spec.program = "/bin/true";
  spec.cwd = tmp.Join("gone");
  Result<pid_t> pid = PosixSpawnLauncher().Launch(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(),
            "cannot start /bin/true in " + tmp.Join("gone") + ": No such file or directory");
}

}  // namespace
}  // namespace longhaul::agent

#include "agent/lib/readoption.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

TEST(DecideAdoptionTest, EveryCase) {
  AttemptProbe p;
  EXPECT_EQ(DecideAdoption(p), Adoption::kNeverStarted);
  p.shim_lock_held = true;
  EXPECT_EQ(DecideAdoption(p), Adoption::kWaitForShim);
  p = {};
  p.pid = PidInfo{};
  EXPECT_EQ(DecideAdoption(p), Adoption::kShimDied);
  p.stage_alive = true;
  EXPECT_EQ(DecideAdoption(p), Adoption::kAdoptStage);
  p.shim_alive = true;
  EXPECT_EQ(DecideAdoption(p), Adoption::kAdoptShim);
  p.exit = ExitInfo{};
  EXPECT_EQ(DecideAdoption(p), Adoption::kReportExit);
  p.done = true;
  EXPECT_EQ(DecideAdoption(p), Adoption::kIgnore);
  p = {};
  p.exit_error = "exit.json: not a JSON object";
  EXPECT_EQ(DecideAdoption(p), Adoption::kShimDied);
}

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeDirs(dir_.path()).ok()); }
  void WritePid(pid_t shim, int64_t shim_start, pid_t stage, int64_t stage_start) {
    testing::WriteTextFile(
        dir_.File("pid.json"),
        StrCat("{\"shim_pid\":", shim, ",\"shim_start\":", shim_start, ",\"stage_pid\":", stage,
               ",\"stage_start\":", stage_start, ",\"started_at_ms\":1}"));
  }
  Adoption Decide() {
    int fd = -1;
    Adoption a = DecideAdoption(ProbeAttempt(dir_, &fd));
    if (fd >= 0) ::close(fd);
    return a;
  }
  testing::TempDir tmp_;
  AttemptDir dir_{tmp_.path(), 9};
};

TEST_F(ProbeTest, LiveShimIsAdopted) {
  // This test process stands in for a live shim and stage.
  int64_t start = *ProcessStartTime(::getpid());
  WritePid(::getpid(), start, ::getpid(), start);
  EXPECT_EQ(Decide(), Adoption::kAdoptShim);
}

TEST_F(ProbeTest, ReusedPidIsNotAdopted) {
  int64_t start = *ProcessStartTime(::getpid());
  WritePid(::getpid(), start - 1, ::getpid(), start - 1);
  EXPECT_EQ(Decide(), Adoption::kShimDied);
}

TEST_F(ProbeTest, ExitedAttemptIsReported) {
  WritePid(::getpid(), 1, ::getpid(), 1);
  ASSERT_TRUE(dir_.WriteExit(ExitInfo{0, 0, 5, "", false, "", ""}).ok());
  EXPECT_EQ(Decide(), Adoption::kReportExit);
  ASSERT_TRUE(dir_.MarkDone().ok());
  EXPECT_EQ(Decide(), Adoption::kIgnore);
}

TEST_F(ProbeTest, NothingWrittenIsNeverStartedAndTheProbeHoldsTheLock) {
  int fd = -1;
  AttemptProbe p = ProbeAttempt(dir_, &fd);
  EXPECT_EQ(DecideAdoption(p), Adoption::kNeverStarted);
  ASSERT_GE(fd, 0);
  // While the agent holds it, a shim could not lock the attempt (it would refuse to run).
  int other = ::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
  EXPECT_NE(::flock(other, LOCK_EX | LOCK_NB), 0);
  ::close(other);
  ::close(fd);
  EXPECT_FALSE(PathExists(dir_.File("shim.lock")));  // the probe creates nothing
}

TEST_F(ProbeTest, LockedByAStartingShimMeansWait) {
  int shim = ::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(::flock(shim, LOCK_EX | LOCK_NB), 0);
  EXPECT_EQ(Decide(), Adoption::kWaitForShim);
  ::close(shim);
  EXPECT_EQ(Decide(), Adoption::kNeverStarted);
}

TEST_F(ProbeTest, ShimOfAnEarlierVersionHoldingShimLockMeansWait) {
  int shim = ::open(dir_.File("shim.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_EQ(::flock(shim, LOCK_EX | LOCK_NB), 0);
  EXPECT_EQ(Decide(), Adoption::kWaitForShim);
  ::close(shim);
  EXPECT_EQ(Decide(), Adoption::kNeverStarted);
}

}  // namespace
}  // namespace longhaul::agent

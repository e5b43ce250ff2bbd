// DiskWatch on a small tmpfs: one change when the state dir fills, none while it stays full,
// one when space returns; a write's ENOSPC makes it full at once.
#include "agent/lib/disk_watch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "tests/testing/tmpfs.h"

namespace longhaul::agent {
namespace {

using Change = DiskWatch::Change;

TEST(DiskWatchTest, ReportsEachEpisodeOnceAndClearsWhenSpaceReturns) {
  testing::TmpfsMount fs(4 << 20);
  if (!fs.ok()) GTEST_SKIP() << fs.error();
  DiskWatch disk(fs.path(), 1 << 20);
  EXPECT_EQ(disk.Check(), Change::kNone);
  EXPECT_FALSE(disk.full());
  EXPECT_GT(disk.free_bytes(), 3 << 20);

  ASSERT_EQ(fs.Fill("fill"), ENOSPC);
  EXPECT_EQ(disk.Check(), Change::kBecameFull);
  EXPECT_TRUE(disk.full());
  EXPECT_LT(disk.free_bytes(), 1 << 20);
  EXPECT_EQ(disk.Check(), Change::kNone);           // still full: no second line
  EXPECT_EQ(disk.NoteWriteError(ENOSPC), Change::kNone);

  ASSERT_EQ(::unlink(fs.Join("fill").c_str()), 0);
  EXPECT_EQ(disk.Check(), Change::kCleared);
  EXPECT_FALSE(disk.full());
  EXPECT_EQ(disk.Check(), Change::kNone);
}

TEST(DiskWatchTest, AWriteThatFailedForLackOfSpaceMakesItFull) {
  DiskWatch disk("/", 0);  // statvfs alone would never call it full
  EXPECT_EQ(disk.NoteWriteError(EIO), Change::kNone);
  EXPECT_FALSE(disk.full());
  EXPECT_EQ(disk.NoteWriteError(ENOSPC), Change::kBecameFull);
  EXPECT_TRUE(disk.full());
  EXPECT_EQ(disk.NoteWriteError(EDQUOT), Change::kNone);
  EXPECT_EQ(disk.Check(), Change::kCleared);  // statvfs says there is room
}

}  // namespace
}  // namespace longhaul::agent

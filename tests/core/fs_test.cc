#include "core/fs.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdint>

#include "core/path_prefix.h"
#include "core/rlimit.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

TEST(FsTest, AtomicWriteReplacesWholeFile) {
  testing::TempDir dir;
  std::string path = dir.Join("a/b/exit.json");
  ASSERT_TRUE(MakeDirs(dir.Join("a/b")).ok());
  ASSERT_TRUE(WriteFileAtomic(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second").ok());
  EXPECT_EQ(*ReadFile(path), "second");
}

TEST(FsTest, ErrorsNameThePath) {
  auto r = ReadFile("/nonexistent/longhaul/file");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsNotFound(r.status()));
  EXPECT_NE(r.status().message().find("/nonexistent/longhaul/file"), std::string::npos);
}

}  // namespace
}  // namespace longhaul

namespace longhaul {
namespace {

TEST(OpenFileLimitTest, RaisesTheSoftLimitToTheHardOne) {
  struct rlimit before;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max < 64) GTEST_SKIP() << "hard limit " << before.rlim_max;
  struct rlimit low = before;
  low.rlim_cur = 32;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  int64_t now = RaiseOpenFileLimit();
  struct rlimit after;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  EXPECT_EQ(now,
            before.rlim_max == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(before.rlim_max));
  ::setrlimit(RLIMIT_NOFILE, &before);
}

TEST(OpenFileLimitTest, RunningOutOfDescriptorsIsATransientError) {
  EXPECT_TRUE(absl::IsUnavailable(ErrnoStatus("open", "/x", EMFILE)));
  EXPECT_TRUE(absl::IsUnavailable(ErrnoStatus("open", "/x", ENFILE)));
  EXPECT_TRUE(absl::IsResourceExhausted(ErrnoStatus("write", "/x", ENOSPC)));
}

TEST(PathPrefixTest, PrefixesHoldWholeComponents) {
  EXPECT_EQ(TrimTrailingSlashes("/lustre//"), "/lustre");
  EXPECT_EQ(TrimTrailingSlashes("//"), "/");
  EXPECT_TRUE(UnderPrefix("/lustre", "/lustre"));
  EXPECT_TRUE(UnderPrefix("/lustre/runs/3", "/lustre"));
  EXPECT_FALSE(UnderPrefix("/lustrex/runs", "/lustre"));
  EXPECT_FALSE(UnderPrefix("/lus", "/lustre"));
  EXPECT_TRUE(UnderPrefix("/anything", "/"));
  EXPECT_FALSE(UnderPrefix("relative/x", "/"));
}

}  // namespace
}  // namespace longhaul

#include "core/fs.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

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

// The names in `dir`, sorted: what a failed write must leave is the old file and nothing else.
std::vector<std::string> FsTestListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(FsTest, AFailedWriteLeavesTheOldFileWholeAndNoTemporaryFile) {
  testing::TempDir dir;
  std::string path = dir.Join("state.json");
  ASSERT_TRUE(WriteFileAtomic(path, "old").ok());
  // Files may grow to 16 bytes: the write gets that far, then fails with EFBIG.
  struct rlimit before;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max < 16) GTEST_SKIP();
  struct rlimit low = before;
  low.rlim_cur = 16;
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &low), 0);
  Status s = WriteFileAtomic(path, std::string(4096, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &before);
  ::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("write " + path + ".tmp.", 0), 0u) << s;
  EXPECT_NE(s.message().find(std::strerror(EFBIG)), std::string::npos) << s;
  EXPECT_EQ(*ReadFile(path), "old");
  EXPECT_EQ(FsTestListDir(dir.path()), std::vector<std::string>{"state.json"});
}

TEST(FsTest, AFailedRenameRemovesTheTemporaryFile) {
  testing::TempDir dir;
  std::string path = dir.Join("taken");
  ASSERT_TRUE(MakeDirs(dir.Join("taken/inside")).ok());  // a directory where the file should go
  Status s = WriteFileAtomic(path, "data", Durability::kRenameOnly);
  EXPECT_EQ(s.message().rfind("rename to " + path + ":", 0), 0u) << s;
  EXPECT_EQ(FsTestListDir(dir.path()), std::vector<std::string>{"taken"});

  Status missing = WriteFileAtomic(dir.Join("no/such/dir/f"), "data");
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_EQ(missing.message().rfind("create " + dir.Join("no/such/dir/f.tmp."), 0), 0u) << missing;
}

TEST(FsTest, EitherDurabilityReplacesTheFile) {
  testing::TempDir dir;
  for (Durability d : {Durability::kFsync, Durability::kRenameOnly}) {
    std::string path = dir.Join(d == Durability::kFsync ? "synced" : "renamed");
    ASSERT_TRUE(WriteFileAtomic(path, "one", d).ok());
    ASSERT_TRUE(WriteFileAtomic(path, "two", d).ok());
    EXPECT_EQ(*ReadFile(path), "two");
  }
  EXPECT_EQ(FsTestListDir(dir.path()), (std::vector<std::string>{"renamed", "synced"}));
  // The errno form, for programs without absl (longhaul-shim): 0, or the step that failed.
  AtomicWriteFailure failure;
  EXPECT_EQ(WriteFileAtomicErrno(dir.Join("plain"), "x", Durability::kFsync, &failure), 0);
  EXPECT_EQ(WriteFileAtomicErrno(dir.Join("none/x"), "x", Durability::kFsync, &failure), ENOENT);
  EXPECT_STREQ(failure.step, "create");
  EXPECT_EQ(failure.path.rfind(dir.Join("none/x.tmp."), 0), 0u) << failure.path;
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

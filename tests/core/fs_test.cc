#include "core/fs.h"

#include <gtest/gtest.h>

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

// The write-ahead log is copied back at the writer's next Begin, not inside the commit that grew
// it: a big commit answers first. And the log stays bounded under a steady stream of commits.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "core/strings.h"
#include "daemon/store/sqlite_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

using testing::TempDir;

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  auto n = std::filesystem::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(n);
}

// One transaction holding a workflow text of `bytes` (distinct texts: PutWorkflow keeps one
// copy per hash).
void CommitText(SqliteStore* store, int i, size_t bytes) {
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(
      store->PutWorkflow(StrCat("w", i), std::string(bytes, 'a' + i % 26), StrCat("h", i), i).ok());
  ASSERT_TRUE(store->Commit().ok());
}

class WalCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = SqliteStore::Open(path);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store = std::move(*opened);
  }

  TempDir dir;
  std::string path = dir.Join("longhaul.db");
  std::unique_ptr<SqliteStore> store;
};

TEST_F(WalCheckpointTest, ABigCommitLeavesTheCopyToTheWritersNextTransaction) {
  SqliteStore* s = store.get();
  CommitText(s, 0, 8'000'000);  // some 2,000 pages of 4 KiB, twice SQLite's threshold
  EXPECT_GT(FileSize(path + "-wal"), 8'000'000);
  EXPECT_LT(FileSize(path), 1'000'000) << "the commit itself copied the log back";
  EXPECT_EQ(s->checkpoints(), 0);

  ASSERT_TRUE(s->Begin().ok());
  EXPECT_EQ(s->checkpoints(), 1);
  EXPECT_GT(FileSize(path), 8'000'000) << "Begin did not copy the log back";
  s->Rollback();
}

TEST_F(WalCheckpointTest, TheLogStaysBoundedUnderSteadyCommits) {
  SqliteStore* s = store.get();
  // 60 commits of about 100 pages: 6,000 pages, 24 MB, if the log were never started over.
  int64_t largest = 0;
  for (int i = 0; i < 60; ++i) {
    CommitText(s, i, 400'000);
    largest = std::max(largest, FileSize(path + "-wal"));
  }
  EXPECT_GE(s->checkpoints(), 4);
  // The threshold (1,000 pages) plus the commit that crossed it, and page headers.
  EXPECT_LT(largest, 6'000'000) << "the log grew past its threshold: it was never started over";
}

}  // namespace
}  // namespace longhaul::store

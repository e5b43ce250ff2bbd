// The write-ahead log is copied back by the checkpointer's thread, not inside the writer's
// commit: after a big commit the database file has not grown until the checkpointer runs.
#include "daemon/store/checkpointer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "daemon/store/sqlite_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

using testing::TempDir;
using testing::WaitFor;

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  auto n = std::filesystem::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(n);
}

// About 8 MB in one commit: some 2,000 pages of 4 KiB, past the 1,000-frame threshold.
void WriteBigCommit(Db* db) {
  ASSERT_TRUE(db->Exec("CREATE TABLE IF NOT EXISTS t(x BLOB)").ok());
  ASSERT_TRUE(db->Exec("BEGIN").ok());
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES (zeroblob(1000000))").ok());
  }
  ASSERT_TRUE(db->Exec("COMMIT").ok());
}

TEST(WalCheckpointerTest, TheWritersCommitLeavesTheCopyToTheCheckpointer) {
  TempDir dir;
  std::string path = dir.Join("a.db");
  auto writer = Db::Open(path, /*create=*/true, /*read_only=*/false);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // A threshold no commit reaches: only CheckpointNow copies.
  auto checkpointer = WalCheckpointer::Start(path, /*threshold_frames=*/1'000'000);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status();
  (*checkpointer)->Attach(writer->get());

  WriteBigCommit(writer->get());
  EXPECT_GT(FileSize(path + "-wal"), 8'000'000);
  EXPECT_LT(FileSize(path), 1'000'000) << "the commit itself copied the log back";
  EXPECT_EQ((*checkpointer)->checkpoints(), 0);

  ASSERT_TRUE((*checkpointer)->CheckpointNow(/*timeout_ms=*/30'000));
  EXPECT_GT(FileSize(path), 8'000'000);
  // The rows are there for a new connection.
  auto reader = Db::Open(path, false, /*read_only=*/true);
  ASSERT_TRUE(reader.ok());
  auto count = (*reader)->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok());
  ASSERT_TRUE((*count)->Step().value_or(false));
  EXPECT_EQ((*count)->Int(0), 8);
  (*count)->Reset();
}

TEST(WalCheckpointerTest, AStoreCheckpointsOnItsOwnOnceTheLogPassesAThousandPages) {
  TempDir dir;
  std::string path = dir.Join("longhaul.db");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_NE((*store)->checkpointer(), nullptr);
  int64_t before = (*store)->checkpointer()->checkpoints();

  // Through the store's own writer: a workflow text of 8 MB.
  ASSERT_TRUE((*store)->Begin().ok());
  ASSERT_TRUE((*store)->PutWorkflow("big", std::string(8'000'000, 'x'), "h-big", 1).ok());
  ASSERT_TRUE((*store)->Commit().ok());
  EXPECT_TRUE(WaitFor([&] { return (*store)->checkpointer()->checkpoints() > before; }, 30'000))
      << "no checkpoint after a commit of some 2,000 pages";
  EXPECT_TRUE(WaitFor([&] { return FileSize(path) > 8'000'000; }, 30'000));
}

}  // namespace
}  // namespace longhaul::store

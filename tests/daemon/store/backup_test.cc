// store::BackupDatabase on a real SQLite file: the copy holds what was committed, is one
// self-contained file, and the calls that would overwrite or lose something are refused.
#include "daemon/store/backup.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/fs.h"
#include "daemon/store/migrations.h"
#include "daemon/store/sqlite_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

using testing::ReadTextFile;
using testing::TempDir;
using testing::WriteTextFile;

class BackupDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStore::Open(dir_.Join("db.sqlite"));
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    ASSERT_TRUE(store_->Begin().ok());
    for (int i = 0; i < 50; ++i) {
      v1::AuditEntry e;
      e.set_ts_ms(i);
      e.set_principal("p");
      e.set_role("admin");
      e.set_action("Test");
      e.set_detail(std::string(1000, 'x'));
      e.set_result("OK");
      ASSERT_TRUE(store_->InsertAudit(e).ok());
    }
    ASSERT_TRUE(store_->Commit().ok());
  }

  TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(BackupDatabaseTest, CopiesWhatWasCommittedIntoOneCheckedFile) {
  // An open write transaction is not in the copy, and does not block it.
  ASSERT_TRUE(store_->Begin().ok());
  v1::AuditEntry uncommitted;
  uncommitted.set_principal("later");
  ASSERT_TRUE(store_->InsertAudit(uncommitted).ok());

  std::string dest = dir_.Join("copy.db");
  Result<BackupResult> b = BackupDatabase(store_->path(), dest);
  ASSERT_TRUE(b.ok()) << b.status().message();
  store_->Rollback();
  EXPECT_EQ(b->path, dest);
  EXPECT_GT(b->pages, 1);
  EXPECT_EQ(b->bytes, b->pages * b->page_size);
  EXPECT_EQ(b->bytes, static_cast<int64_t>(std::filesystem::file_size(dest)));
  EXPECT_EQ(b->schema_version, LatestSchemaVersion());
  EXPECT_FALSE(PathExists(dest + ".tmp"));
  EXPECT_FALSE(PathExists(dest + "-wal"));

  auto copy = SqliteStore::Open(dest);
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  v1::ListAuditRequest req;
  req.set_limit(1000);
  Result<v1::ListAuditResponse> audit = (*copy)->ListAudit(req);
  ASSERT_TRUE(audit.ok()) << audit.status().message();
  EXPECT_EQ(audit->entries_size(), 50);
  EXPECT_EQ(audit->entries(0).principal(), "p");
}

TEST_F(BackupDatabaseTest, RefusesWhatWouldOverwriteOrCannotBeFound) {
  std::string dest = dir_.Join("copy.db");
  WriteTextFile(dest, "precious");
  Result<BackupResult> exists = BackupDatabase(store_->path(), dest);
  EXPECT_EQ(exists.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadTextFile(dest), "precious");
  EXPECT_EQ(BackupDatabase(store_->path(), store_->path()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BackupDatabase(store_->path(), "relative.db").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BackupDatabase(store_->path(), dir_.Join("none/copy.db")).status().code(),
            absl::StatusCode::kNotFound);
  Result<BackupResult> no_source = BackupDatabase(dir_.Join("missing.db"), dir_.Join("c.db"));
  EXPECT_EQ(no_source.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(no_source.status().message().find("missing.db"), std::string::npos);
  EXPECT_FALSE(PathExists(dir_.Join("c.db")));
}

TEST_F(BackupDatabaseTest, ALeftoverTemporaryFileFromAnInterruptedBackupIsReplaced) {
  std::string dest = dir_.Join("copy.db");
  WriteTextFile(dest + ".tmp", "half a backup");
  Result<BackupResult> b = BackupDatabase(store_->path(), dest);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_FALSE(PathExists(dest + ".tmp"));
  EXPECT_TRUE(SqliteStore::Open(dest).ok());
}

}  // namespace
}  // namespace longhaul::store

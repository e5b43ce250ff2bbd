// The store's identity (cluster id, incarnation), the check that its file is still the one it
// opened, and the floor under new attempt ids (docs/coordinator.md, "Identity").
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/strings.h"
#include "daemon/store/backup.h"
#include "daemon/store/sqlite_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

bool IsHex(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::unique_ptr<SqliteStore> OpenStore(const std::string& path) {
  Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// Inserts a run with one stage and `n` attempts of it; returns their ids.
std::vector<int64_t> InsertAttempts(SqliteStore* store, int n) {
  std::vector<int64_t> ids;
  EXPECT_TRUE(store->Begin().ok());
  Result<int64_t> wf = store->PutWorkflow("wf", "name: wf", "hash-wf", 1000);
  EXPECT_TRUE(wf.ok());
  RunRow run;
  run.workflow_id = *wf;
  run.workflow_name = "wf";
  run.status = v1::RUN_RUNNING;
  run.created_at_ms = 1000;
  EXPECT_TRUE(store->InsertRun(&run).ok());
  StageRow stage;
  stage.run_id = run.id;
  stage.name = "a";
  EXPECT_TRUE(store->InsertStage(&stage).ok());
  for (int i = 1; i <= n; ++i) {
    AttemptRow at;
    at.stage_id = stage.id;
    at.run_id = run.id;
    at.number = i;
    at.agent_id = "n1";
    at.state = v1::ATTEMPT_STARTING;
    EXPECT_TRUE(store->InsertAttempt(&at).ok());
    ids.push_back(at.id);
  }
  EXPECT_TRUE(store->Commit().ok());
  return ids;
}

TEST(StoreIdentity, ANewStoreHasARandomIdentityThatStaysAcrossOpens) {
  testing::TempDir dir;
  std::string path = dir.Join("longhaul.db");
  StoreIdentity first = OpenStore(path)->identity();
  EXPECT_TRUE(first.created);
  EXPECT_EQ(first.cluster_id.size(), 32u);
  EXPECT_TRUE(IsHex(first.cluster_id)) << first.cluster_id;
  EXPECT_EQ(first.incarnation.size(), 16u);
  EXPECT_TRUE(IsHex(first.incarnation)) << first.incarnation;
  EXPECT_GT(first.created_at_ms, 1700000000000);

  StoreIdentity again = OpenStore(path)->identity();
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.cluster_id, first.cluster_id);
  EXPECT_EQ(again.incarnation, first.incarnation);
  EXPECT_TRUE(again.restored_from.empty());

  StoreIdentity other = OpenStore(dir.Join("other.db"))->identity();
  EXPECT_NE(other.cluster_id, first.cluster_id);
}

TEST(StoreIdentity, ABackupCopyPutInPlaceKeepsTheClusterAndGetsANewIncarnationOnce) {
  testing::TempDir dir;
  std::string path = dir.Join("longhaul.db");
  StoreIdentity live = OpenStore(path)->identity();
  ASSERT_TRUE(BackupDatabase(path, dir.Join("copy.db")).ok());
  // The live store is not marked: only the copy is.
  EXPECT_EQ(OpenStore(path)->identity().incarnation, live.incarnation);

  StoreIdentity restored = OpenStore(dir.Join("copy.db"))->identity();
  EXPECT_EQ(restored.cluster_id, live.cluster_id);
  EXPECT_NE(restored.incarnation, live.incarnation);
  EXPECT_EQ(restored.restored_from, live.incarnation);
  EXPECT_GT(restored.copied_at_ms, 0);
  // Its next start is an ordinary one.
  StoreIdentity next = OpenStore(dir.Join("copy.db"))->identity();
  EXPECT_EQ(next.incarnation, restored.incarnation);
  EXPECT_TRUE(next.restored_from.empty());
}

TEST(StoreIdentity, ARemovedDatabaseFileStopsEveryWriteWithAnErrorNamingIt) {
  testing::TempDir dir;
  std::string path = dir.Join("longhaul.db");
  std::unique_ptr<SqliteStore> store = OpenStore(path);
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_TRUE(store->FileCheck().ok());

  ASSERT_EQ(::unlink(path.c_str()), 0);
  Status st = store->Begin();
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_NE(st.message().find(StrCat("the database file ", path, " was removed")),
            std::string::npos)
      << st;
  EXPECT_FALSE(store->in_transaction());
  EXPECT_EQ(store->FileCheck(), st);
  // Sticky, also once a file is back at the path (it is not the one this store has open), and
  // no new reader opens it.
  OpenStore(path);
  EXPECT_EQ(store->Begin(), st);
  EXPECT_FALSE(store->GetRun(1, false).ok());
}

TEST(StoreIdentity, AReplacedDatabaseFileIsNoticedToo) {
  testing::TempDir dir;
  std::string path = dir.Join("longhaul.db");
  std::unique_ptr<SqliteStore> store = OpenStore(path);
  OpenStore(dir.Join("other.db"));
  ASSERT_EQ(::rename(dir.Join("other.db").c_str(), path.c_str()), 0);
  Status st = store->Begin();
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_NE(st.message().find("was replaced by another file"), std::string::npos) << st;
}

TEST(StoreIdentity, AttemptIdsStartAboveTheHighestAnAgentReported) {
  testing::TempDir dir;
  std::unique_ptr<SqliteStore> store = OpenStore(dir.Join("longhaul.db"));
  EXPECT_EQ(InsertAttempts(store.get(), 2), (std::vector<int64_t>{1, 2}));
  store->RaiseAttemptIds(9);
  store->RaiseAttemptIds(4);  // a lower report does not lower the floor
  EXPECT_EQ(InsertAttempts(store.get(), 2), (std::vector<int64_t>{10, 11}));
  // Below what the table already holds, a report changes nothing.
  store->RaiseAttemptIds(5);
  EXPECT_EQ(InsertAttempts(store.get(), 1), (std::vector<int64_t>{12}));
}

}  // namespace
}  // namespace longhaul::store

// `longhaul admin backup`: an online copy of longhauld's database while a run writes events,
// checked and opened by the same build; a coordinator restored from it re-adopts the attempt
// its agent still runs and finishes the run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <filesystem>

#include "core/strings.h"
#include "daemon/store/migrations.h"
#include "daemon/store/sqlite_store.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

class BackupTest : public ClusterTest {
 protected:
  Result<v1::BackupResponse> Backup(const std::string& path) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::BackupRequest req;
    req.set_path(path);
    v1::BackupResponse resp;
    grpc::Status s = cluster().stub().Backup(&ctx, req, &resp);
    if (!s.ok()) {
      return Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
    }
    return resp;
  }

  std::string Journal() { return cluster().dir().Join("journal.txt"); }
};

// The first column of the first row of `sql` on the file at `path`, opened read-only.
std::string QueryFile(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out = "<cannot open>";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    out = "<no row>";
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out = t ? reinterpret_cast<const char*>(t) : "";
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

TEST_F(BackupTest, CopyWhileARunWritesEventsPassesIntegrityCheckAndOpens) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  // 20,000 progress events as fast as the stage can write them: the scheduler commits
  // batches of them all through the copies below.
  Result<int64_t> id =
      cluster().Submit("name: busy\nstages:\n" +
                       StageYaml("writer", JournaledRun(Journal(), {"--events", "20000"})));
  ASSERT_TRUE(id.ok()) << id.status().message();
  ASSERT_TRUE(cluster()
                  .WaitForRun(*id,
                              [](const v1::Run& r) {
                                const v1::Attempt* a = FindAttempt(r, "writer", 1);
                                return a != nullptr && a->events() > 0;
                              })
                  .ok());
  std::vector<v1::BackupResponse> copies;
  for (int i = 0; i < 3; ++i) {
    std::string path = cluster().dir().Join(StrCat("copy", i, ".db"));
    Result<v1::BackupResponse> b = Backup(path);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_EQ(b->path(), path);
    EXPECT_GT(b->pages(), 0);
    EXPECT_EQ(b->bytes(), static_cast<int64_t>(std::filesystem::file_size(path)));
    EXPECT_EQ(b->bytes(), b->pages() * b->page_size());
    EXPECT_EQ(b->schema_version(), store::LatestSchemaVersion());
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << "a backup is one self-contained file";
    EXPECT_EQ(QueryFile(path, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(QueryFile(path, "PRAGMA journal_mode"), "delete");
    copies.push_back(*b);
  }
  Result<v1::Run> done = cluster().WaitForRunEnd(*id, 120'000);
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_EQ(done->status(), v1::RUN_SUCCEEDED) << DescribeRun(*done);

  // Each copy is one consistent moment: the events it holds for the attempt are 1..N with no
  // gap, and the same build opens it (migrations: nothing to do) and reads the run.
  for (int i = 0; i < 3; ++i) {
    std::string path = cluster().dir().Join(StrCat("copy", i, ".db"));
    std::string count = QueryFile(path, "SELECT COUNT(*) FROM events");
    std::string max_seq = QueryFile(path, "SELECT COALESCE(MAX(seq), 0) FROM events");
    EXPECT_EQ(count, max_seq) << path;
    std::string opened = cluster().dir().Join(StrCat("opened", i, ".db"));
    std::filesystem::copy_file(path, opened);
    Result<std::unique_ptr<store::SqliteStore>> s = store::SqliteStore::Open(opened);
    ASSERT_TRUE(s.ok()) << s.status().message();
    Result<v1::Run> run = (*s)->GetRun(*id, /*include_attempts=*/true);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(run->workflow_name(), "busy");
    ASSERT_NE(FindStage(*run, "writer"), nullptr);
    EXPECT_EQ((*s)->IntegrityCheck().value_or("?"), "ok");
  }

  // Never over a file, never the database itself, only absolute paths, only into a directory
  // that exists; nothing is created by a refused call.
  Result<v1::BackupResponse> again = Backup(copies[0].path());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists) << again.status();
  EXPECT_EQ(Backup(cluster().db_path()).status().code(), absl::StatusCode::kInvalidArgument);
  Result<v1::BackupResponse> relative = Backup("copy.db");
  EXPECT_EQ(relative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(relative.status().message().find("'copy.db' is not an absolute path"),
            std::string::npos)
      << relative.status();
  Result<v1::BackupResponse> nodir = Backup(cluster().dir().Join("no/such/dir/x.db"));
  EXPECT_EQ(nodir.status().code(), absl::StatusCode::kNotFound) << nodir.status();
  EXPECT_FALSE(std::filesystem::exists(cluster().dir().Join("copy.db")));

  // Each call is in the audit trail.
  CommandResult audit = cluster().Cli({"audit"});
  EXPECT_EQ(audit.exit_code, 0) << (audit.out + audit.err);
  EXPECT_NE((audit.out + audit.err).find("Backup"), std::string::npos) << (audit.out + audit.err);
}

TEST_F(BackupTest, CoordinatorRestoredFromABackupReadoptsTheRunningAttempt) {
  ClusterOptions options;
  options.lost_after = "20s";  // longer than the agent's reconnect back-off
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  Result<int64_t> id = cluster().Submit(
      "name: restore\nstages:\n" +
      StageYaml("long", JournaledRun(Journal(), {"--progress", "40", "--sleep", "8"})) +
      StageYaml("after", JournaledRun(Journal(), {"--print", "a"}), {"long"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> running = cluster().WaitForRun(*id, [](const v1::Run& r) {
    const v1::Attempt* a = FindAttempt(r, "long", 1);
    return a != nullptr && a->state() == v1::ATTEMPT_RUNNING && a->pid() > 0;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();
  int64_t pid = FindAttempt(*running, "long", 1)->pid();

  // The CLI's form, then the coordinator stopped and its database replaced by the copy.
  std::string backup = cluster().dir().Join("backup.db");
  CommandResult made = cluster().Cli({"admin", "backup", backup});
  ASSERT_EQ(made.exit_code, 0) << (made.out + made.err);
  EXPECT_NE((made.out + made.err).find("integrity_check ok"), std::string::npos)
      << (made.out + made.err);
  Status restarted = cluster().RestoreCoordinatorFrom(backup);
  ASSERT_TRUE(restarted.ok()) << restarted.message();
  Result<v1::Run> end = cluster().WaitForRunEnd(*id, 60'000);
  ASSERT_TRUE(end.ok()) << end.status().message();
  ASSERT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
  const v1::Stage* s = FindStage(*end, "long");
  ASSERT_EQ(s->attempts_size(), 1) << DescribeRun(*end);
  EXPECT_EQ(s->attempts(0).pid(), pid) << "the stage was started again, not re-adopted";
  EXPECT_EQ(s->attempts(0).exit_code(), 0);
  EXPECT_EQ(JournalCounts(Journal()), (std::map<std::string, int>{{"long", 1}, {"after", 1}}));
}

TEST_F(BackupTest, WithTokensOnlyAnAdminMayBackUp) {
  TempDir dir;
  Tokens t = MakeTokens(dir, {{"operator", "olga"}, {"admin", "ada"}});
  ClusterOptions o;
  o.coordinator_flags = {"--tokens", t.file};
  o.client_token = t.by_name["ada"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  auto cli = [&](const std::string& who, const std::string& file) {
    std::map<std::string, std::string> env = {{"LONGHAUL_COORDINATOR", cluster().address()},
                                              {"LONGHAUL_TOKEN", t.by_name[who]}};
    return RunCommand({BinPath("longhaul"), "admin", "backup", file}, env);
  };
  std::string file = cluster().dir().Join("by-olga.db");
  CommandResult r = cli("olga", file);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(r.err,
            "longhaul: permission denied: olga (operator) may not back up the database: that "
            "needs the admin role\n");
  EXPECT_FALSE(std::filesystem::exists(file));
  r = cli("ada", file);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace longhaul::testing

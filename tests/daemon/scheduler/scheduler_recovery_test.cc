// A batch whose commit fails leaves nothing behind: what it decided goes with its transaction,
// and the model is reloaded from the store (Recover), as the loop does (loop.cc).
#include <memory>

#include "daemon/store/sqlite.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kChain[] = R"(
name: chain
stages:
  a: {run: [prog]}
  b: {needs: [a], run: [prog]}
)";

// Makes every later commit that updated a stage fail, until Clear(): a trigger, put into the
// store's file from a second connection, adds a row that breaks a deferred foreign key, which
// SQLite checks at COMMIT. The statements themselves succeed; the commit fails.
class CommitFault {
 public:
  explicit CommitFault(const std::string& path) {
    auto db = store::Db::Open(path, /*create=*/false, /*read_only=*/false);
    EXPECT_TRUE(db.ok()) << db.status();
    if (db.ok()) db_ = std::move(*db);
  }
  Status Arm() {
    return db_->Exec(
        "CREATE TABLE fault_parent(id INTEGER PRIMARY KEY);"
        "CREATE TABLE fault_child(parent INTEGER REFERENCES fault_parent(id) "
        "  DEFERRABLE INITIALLY DEFERRED);"
        "CREATE TRIGGER fault_on_stage AFTER UPDATE ON stages "
        "  BEGIN INSERT INTO fault_child VALUES (1); END;");
  }
  Status Clear() {
    return db_->Exec(
        "DROP TRIGGER fault_on_stage; DROP TABLE fault_child; DROP TABLE fault_parent;");
  }

 private:
  std::unique_ptr<store::Db> db_;
};

v1::StageStatus InMemory(const Scheduler& s, int64_t run, const std::string& stage) {
  const RunState* r = s.FindRun(run);
  if (r == nullptr) return v1::STAGE_STATUS_UNSPECIFIED;
  for (const auto& st : r->stages) {
    if (st->row.name == stage) return st->row.status;
  }
  return v1::STAGE_STATUS_UNSPECIFIED;
}

TEST_F(SchedulerTest, AFailedCommitSendsNothingPushesNothingAndRecoversTheStoresState) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kChain);
  int64_t a_id = TakeStarts()[0].attempt_id();
  Started(n1, a_id);
  auto watching = std::make_shared<Watcher>();
  Batch([&] { ASSERT_TRUE(scheduler_->Watch(run, watching).ok()); });
  v1::RunUpdate u;
  bool final = false;
  while (watching->Next(&u, &final, 0)) {
  }
  TakeAll();
  Result<store::AttemptRow> a_row = store_->FindAttempt(run, "a", 1);
  ASSERT_TRUE(a_row.ok()) << a_row.status();

  CommitFault fault(store_->path());
  ASSERT_TRUE(fault.Arm().ok());
  // One batch: `a` succeeds (its watcher would see it, and `b` would start on n1), a log is
  // asked of n1, and a new watcher registers (its snapshot is an after-commit callback).
  auto joining = std::make_shared<Watcher>();
  Status log_answer = OkStatus();
  bool log_answered = false;
  Status committed = TryBatch([&] {
    v1::AgentMessage m;
    m.mutable_exited()->set_attempt_id(a_id);
    m.mutable_exited()->set_exit_code(0);
    m.mutable_exited()->set_ended_at_ms(clock_.NowMs());
    scheduler_->OnAgentMessage(n1, m);
    ASSERT_EQ(InMemory(*scheduler_, run, "a"), v1::STAGE_SUCCEEDED);
    scheduler_->ReadLog(*a_row, v1::ReadLogRequest(), [&](Result<v1::LogData> data) {
      log_answered = true;
      log_answer = data.status();
    });
    ASSERT_TRUE(scheduler_->Watch(run, joining).ok());
  });
  ASSERT_FALSE(committed.ok()) << "the fault did not fail the commit";
  EXPECT_NE(committed.message().find("FOREIGN KEY"), std::string::npos) << committed;
  ASSERT_TRUE(fault.Clear().ok());
  RecoverAfterFailedCommit();

  // The log's caller is answered, not left waiting on a request that was never sent.
  EXPECT_TRUE(log_answered);
  EXPECT_TRUE(absl::IsUnavailable(log_answer)) << log_answer;
  // The model is the store's again: `a` running, `b` waiting.
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_RUNNING);
  EXPECT_EQ(InMemory(*scheduler_, run, "a"), v1::STAGE_RUNNING);
  EXPECT_EQ(InMemory(*scheduler_, run, "b"), GetStage(run, "b").status());
  EXPECT_EQ(InMemory(*scheduler_, run, "b"), v1::STAGE_WAITING);

  // The next batch commits and runs its after-commit work, and nothing of the failed one.
  Batch();
  for (const auto& [session, msg] : link_.sent) {
    EXPECT_FALSE(msg.has_start()) << "a start decided by the failed batch went out";
    EXPECT_FALSE(msg.has_read_log()) << "a log request of the failed batch went out";
  }
  EXPECT_EQ(link_.closed, std::vector<uint64_t>{n1}) << "sessions close on a reload";
  EXPECT_FALSE(joining->Next(&u, &final, 0))
      << "a watcher registered by the failed batch got a snapshot: stage a is "
      << (u.run().stages_size() > 0 ? StageStatusName(u.run().stages(0).status()) : "absent");
  EXPECT_FALSE(watching->Next(&u, &final, 0)) << "an update for a change that was rolled back";

  // n1 reconnects with `a` still running and reports its end again: now it is recorded, the
  // watcher sees it, and `b` starts.
  v1::OwnedAttempt owned;
  owned.set_attempt_id(a_id);
  owned.set_running(true);
  uint64_t again = Connect("n1", 4, 0, {owned});
  Exit(again, a_id, 0);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_SUCCEEDED);
  EXPECT_EQ(InMemory(*scheduler_, run, "a"), v1::STAGE_SUCCEEDED);
  ASSERT_EQ(TakeStarts().size(), 1u);
  ASSERT_TRUE(watching->Next(&u, &final, 0));
  bool saw_a = false;
  for (const auto& s : u.run().stages()) {
    if (s.name() == "a") saw_a = s.status() == v1::STAGE_SUCCEEDED;
  }
  EXPECT_TRUE(saw_a) << "the committed end of `a` reaches the watcher";
  EXPECT_FALSE(joining->Next(&u, &final, 0)) << "its registration failed with its batch";
}

}  // namespace
}  // namespace longhaul::scheduler

// A batch whose commit fails leaves nothing behind: what it decided goes with its transaction,
// and the model is reloaded from the store (Recover), as the loop does (loop.cc).
#include <functional>
#include <memory>
#include <string>

#include "core/strings.h"
#include "daemon/notify/notifier.h"
#include "daemon/scheduler/loop.h"
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
  // Writes into the store's file behind the scheduler's back (before Arm()).
  Status Exec(const std::string& sql) { return db_->Exec(sql); }

 private:
  std::unique_ptr<store::Db> db_;
};

class RecoveryTestDeliverer : public notify::Deliverer {
 public:
  Status Deliver(const notify::Sink&, const std::string&, const std::string&) override {
    ADD_FAILURE() << "the notifier is never started here";
    return OkStatus();
  }
};

class SchedulerRecoveryTest : public SchedulerTest {
 protected:
  // Runs `fn` as one batch whose commit fails (CommitFault), then does what the loop does
  // next: reloads the model from the store. The fault is gone by then.
  void FailedBatch(const std::function<void()>& fn) {
    CommitFault fault(store_->path());
    ASSERT_TRUE(fault.Arm().ok());
    Status committed = TryBatch(fn);
    ASSERT_FALSE(committed.ok()) << "the fault did not fail the commit";
    EXPECT_NE(committed.message().find("FOREIGN KEY"), std::string::npos) << committed;
    ASSERT_TRUE(fault.Clear().ok());
    RecoverAfterFailedCommit();
  }
  // The attempt's exit, as its agent on `session` reports it.
  void ReportExit(uint64_t session, int64_t attempt_id, int code) {
    v1::AgentMessage m;
    m.mutable_exited()->set_attempt_id(attempt_id);
    m.mutable_exited()->set_exit_code(code);
    m.mutable_exited()->set_ended_at_ms(clock_.NowMs());
    scheduler_->OnAgentMessage(session, m);
  }
  // Agent `id` connects again with `attempt_id` still running there.
  uint64_t Reconnect(const std::string& id, int64_t attempt_id) {
    v1::OwnedAttempt owned;
    owned.set_attempt_id(attempt_id);
    owned.set_running(true);
    return Connect(id, 4, 0, {owned});
  }
  // The status of `stage` of `run` in the scheduler's memory.
  v1::StageStatus InMemory(int64_t run, const std::string& stage) {
    const RunState* r = scheduler_->FindRun(run);
    if (r == nullptr) return v1::STAGE_STATUS_UNSPECIFIED;
    for (const auto& st : r->stages) {
      if (st->row.name == stage) return st->row.status;
    }
    return v1::STAGE_STATUS_UNSPECIFIED;
  }
};

TEST_F(SchedulerRecoveryTest, AFailedCommitSendsNothingPushesNothingAndRecoversTheStoresState) {
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

  // One batch: `a` succeeds (its watcher would see it, and `b` would start on n1), a log is
  // asked of n1, and a new watcher registers (its snapshot is an after-commit callback).
  auto joining = std::make_shared<Watcher>();
  Status log_answer = OkStatus();
  bool log_answered = false;
  FailedBatch([&] {
    ReportExit(n1, a_id, 0);
    ASSERT_EQ(InMemory(run, "a"), v1::STAGE_SUCCEEDED);
    scheduler_->ReadLog(*a_row, v1::ReadLogRequest(), [&](Result<v1::LogData> data) {
      log_answered = true;
      log_answer = data.status();
    });
    ASSERT_TRUE(scheduler_->Watch(run, joining).ok());
  });

  // The log's caller is answered, not left waiting on a request that was never sent.
  EXPECT_TRUE(log_answered);
  EXPECT_TRUE(absl::IsUnavailable(log_answer)) << log_answer;
  // The model is the store's again: `a` running, `b` waiting.
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_RUNNING);
  EXPECT_EQ(InMemory(run, "a"), v1::STAGE_RUNNING);
  EXPECT_EQ(InMemory(run, "b"), GetStage(run, "b").status());
  EXPECT_EQ(InMemory(run, "b"), v1::STAGE_WAITING);

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
  uint64_t again = Reconnect("n1", a_id);
  Exit(again, a_id, 0);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_SUCCEEDED);
  EXPECT_EQ(InMemory(run, "a"), v1::STAGE_SUCCEEDED);
  ASSERT_EQ(TakeStarts().size(), 1u);
  ASSERT_TRUE(watching->Next(&u, &final, 0));
  bool saw_a = false;
  for (const auto& s : u.run().stages()) {
    if (s.name() == "a") saw_a = s.status() == v1::STAGE_SUCCEEDED;
  }
  EXPECT_TRUE(saw_a) << "the committed end of `a` reaches the watcher";
  EXPECT_FALSE(joining->Next(&u, &final, 0)) << "its registration failed with its batch";
}

TEST_F(SchedulerRecoveryTest, NoNotificationOfAFailedCommitGoesOut) {
  RecoveryTestDeliverer deliverer;
  notify::Notifier notifier(&deliverer, &clock_, notify::RetryPolicy{}, [](const auto&) {});
  workflow::NotifySpec spec;
  spec.webhooks = {"http://ops.example:9000/longhaul"};
  spec.on = {"stage_failed", "run_failed"};
  scheduler_->set_notifications(&notifier, spec);
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: doomed
stages:
  x: {run: [prog], retry: {limit: 0}}
)");
  int64_t id = TakeStarts()[0].attempt_id();
  Started(n1, id);

  FailedBatch([&] {
    ReportExit(n1, id, 3);
    ASSERT_EQ(InMemory(run, "x"), v1::STAGE_FAILED);
  });
  Batch();
  EXPECT_EQ(notifier.pending(), 0u) << "a notification of the rolled-back failure went out";
  auto stored = store_->ListNotifications(run, 0, 100);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(stored->empty());

  // Reported again once the agent is back, the failure is recorded and notified once.
  uint64_t again = Reconnect("n1", id);
  Exit(again, id, 3);
  EXPECT_EQ(GetStage(run, "x").status(), v1::STAGE_FAILED);
  EXPECT_EQ(notifier.pending(), 2u) << "stage_failed and run_failed";
  scheduler_->set_notifications(nullptr, {});
}

// The loop itself (loop.cc) when the recovery after a failed commit fails too: nothing runs on
// the model it half loaded, waiting callers are answered at once, and it recovers again by
// itself, with back-off, once the store commits; what that recovery fixed is then stored.
TEST_F(SchedulerRecoveryTest, TheLoopRecoversAgainWhenTheRecoveryCommitFails) {
  int64_t run = Submit(R"(
name: lone
stages:
  x: {run: [prog]}
)");
  ASSERT_EQ(GetStage(run, "x").status(), v1::STAGE_READY) << "no agent to run it";
  SchedulerLoop loop(scheduler_.get(), store_.get(), &clock_);
  ASSERT_TRUE(loop.Start().ok());

  // The store says `x` runs without an attempt (a coordinator that died between deciding and
  // recording): a recovery puts it back to ready, an update of stages that the armed fault
  // fails at COMMIT, as it fails the batch that cancels the run.
  CommitFault fault(store_->path());
  ASSERT_TRUE(fault.Exec(StrCat("UPDATE stages SET status = 'running' WHERE run_id = ", run)).ok());
  ASSERT_TRUE(fault.Arm().ok());
  Result<bool> cancel = loop.Call<bool>([&]() -> Result<bool> {
    RETURN_IF_ERROR(scheduler_->Cancel(run).status());
    return true;
  });
  ASSERT_FALSE(cancel.ok()) << "the fault did not fail the batch's commit";
  ASSERT_TRUE(testing::WaitFor([&] { return loop.recovering(); }, 10'000))
      << "the recovery's commit did not fail, or the loop went on regardless";

  // While it recovers, a call is answered without running; a read still gets its value.
  bool ran = false;
  Result<bool> during = loop.Call<bool>([&]() -> Result<bool> {
    ran = true;
    return true;
  });
  EXPECT_TRUE(absl::IsUnavailable(during.status())) << during.status();
  EXPECT_NE(during.status().message().find("FOREIGN KEY"), std::string::npos) << during.status();
  EXPECT_FALSE(ran) << "a task ran on the half-recovered model";
  Result<int> read = loop.Read<int>([]() -> Result<int> { return 7; });
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, 7);
  EXPECT_TRUE(loop.recovering());

  // The store commits again: the loop recovers by itself and runs tasks again.
  ASSERT_TRUE(fault.Clear().ok());
  ASSERT_TRUE(testing::WaitFor([&] { return !loop.recovering(); }, 10'000));
  Result<bool> after = loop.Call<bool>([&]() -> Result<bool> {
    ran = true;
    return true;
  });
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(ran);
  loop.Stop();
  // What the recovery fixed is stored, and the model is the store's; the cancel is gone.
  EXPECT_EQ(GetStage(run, "x").status(), v1::STAGE_READY);
  EXPECT_EQ(InMemory(run, "x"), v1::STAGE_READY);
  EXPECT_NE(GetRun(run).status(), v1::RUN_CANCELLED);
}

}  // namespace
}  // namespace longhaul::scheduler

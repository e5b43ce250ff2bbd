// Internals shared by the store's client-read files: the pooled read connection and the cost
// sums. Not for use outside daemon/store.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

// What `db`'s page cache holds, in bytes (0 where SQLite cannot say).
inline size_t PageCacheBytes(Db* db) {
  int used = 0, highwater = 0;
  if (sqlite3_db_status(db->raw(), SQLITE_DBSTATUS_CACHE_USED, &used, &highwater, 0) != SQLITE_OK) {
    return 0;
  }
  return static_cast<size_t>(used);
}

class SqliteStore::Reader {
 public:
  // What an idle pooled connection may keep in its page cache. A read that scanned more (the
  // stages of a big run, a filtered list over many runs) empties it before the connection goes
  // back to the pool, and has the freed pages handed back: otherwise every pooled connection
  // keeps up to SQLite's 2 MB for good, and the coordinator stays above its idle size after
  // big runs are read. Small reads (a page of runs, a 10-stage run) keep their hot pages.
  static constexpr size_t kIdleCacheBytes = 512 << 10;

  explicit Reader(SqliteStore* store) : store_(store) {}
  ~Reader() {
    if (!db_) return;
    if (PageCacheBytes(db_.get()) > kIdleCacheBytes) {
      sqlite3_db_release_memory(db_->raw());
      if (store_->memory_ != nullptr) store_->memory_->AfterBigRead();
    }
    std::lock_guard<std::mutex> lock(store_->pool_mu_);
    store_->pool_.push_back(std::move(db_));
  }
  Status Acquire() {
    {
      std::lock_guard<std::mutex> lock(store_->pool_mu_);
      if (!store_->pool_.empty()) {
        db_ = std::move(store_->pool_.back());
        store_->pool_.pop_back();
        return OkStatus();
      }
    }
    ASSIGN_OR_RETURN(db_, store_->OpenReader());
    return OkStatus();
  }
  Db* operator->() { return db_.get(); }
  Db* get() { return db_.get(); }

 private:
  SqliteStore* store_;
  std::unique_ptr<Db> db_;
};

// One read transaction on a leased connection: every read until it ends sees the same
// committed state. Ends on destruction (COMMIT, which writes nothing; ROLLBACK if that fails),
// so the connection never goes back to the pool holding an old snapshot.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Db* db) : db_(db) {}
  ~ReadSnapshot() {
    if (open_ && !db_->Exec("COMMIT").ok()) (void)db_->Exec("ROLLBACK");
  }
  Status Begin() {
    RETURN_IF_ERROR(db_->Exec("BEGIN"));
    open_ = true;
    return OkStatus();
  }

 private:
  Db* db_;
  bool open_ = false;
};

namespace internal {

// Cost of each stage of `run_id` that has started attempts, by stage id: wall time over its own
// attempts (a running one counts up to `now_ms`), and that times the GPUs the stage asks for.
Result<std::map<int64_t, SqliteStore::StageCost>> ReadStageCosts(Db* db, int64_t run_id,
                                                                 int64_t now_ms);
// Run.wall_seconds: ended (or now) - started; 0 before it started.
void SetRunWallSeconds(int64_t now_ms, v1::Run* run);
// The budget's used_gpu_hours and reached from the run's gpu_hours (set before this).
void SetRunBudgetUse(v1::Run* run);
// A page token or cursor as a number; empty is 0. InvalidArgument, naming `what`, when it is
// not one a page returned.
Result<int64_t> ParseCursor(const std::string& token, const char* what);
// The run's own fields (no stages) and, where `totals` is given, its kept totals. NotFound for
// an unknown run.
Status ReadRunFields(Db* db, int64_t run_id, v1::Run* run,
                     std::optional<RunTotals>* totals = nullptr);
// Run.stage_counts and Run.gpu_hours (running attempts up to `now_ms`): from the run's kept
// totals, or for a run without them (one the store wrote alone, without the scheduler) from its
// stages and attempts.
Status FillRunTotals(Db* db, int64_t run_id, const std::optional<RunTotals>& totals, int64_t now_ms,
                     v1::Run* run);
// What the GPUs of a stage's (a run's) attempts did, from table gpu_series (v1::GpuUsage);
// left absent when nothing was sampled.
Status FillStageGpuUsage(Db* db, int64_t stage_id, v1::Stage* out);
Status FillRunGpuUsage(Db* db, int64_t run_id, v1::Run* out);
// Run.source and Attempt.environment from the provenance tables; left absent when none.
Status FillRunSourceState(Db* db, int64_t run_id, v1::Run* run);
Status FillAttemptEnvironment(Db* db, int64_t attempt_id, v1::Attempt* attempt);
// A stage's cached-from, latest metrics, artifacts, GPU usage and (with include_attempts)
// attempts.
Status FillStageDetails(Db* db, int64_t stage_id, const StageRow& row, bool include_attempts,
                        v1::Stage* out);

// The stages of run `run_id` whose result retention keeps, by stage id, with why ("the cache
// reuses its result", "run 7 reused its result"). With `as_of_ms`, as the rule stood when the
// run was collected then (what a collected run kept); without, as it stands now (what
// collecting it would keep). sqlite_store_gc.cc.
Result<std::map<int64_t, std::pair<std::string, std::string>>> KeptResults(
    Db* db, int64_t run_id, std::optional<int64_t> as_of_ms);
// For a collected run: marks each stage of `stages` that ran whose result retention removed
// (result_removed) or kept (result_kept, why). Nothing for a run not collected.
Status MarkCollectedResults(Db* db, int64_t run_id,
                            google::protobuf::RepeatedPtrField<v1::Stage>* stages);

// The text of the workflow file run `run_id` was submitted with (sqlite_store_sweeps.cc).
Result<std::string> ReadWorkflowTextOfRun(Db* db, int64_t run_id);

}  // namespace internal
}  // namespace longhaul::store

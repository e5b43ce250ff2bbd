// Internals shared by the store's client-read files: the pooled read connection and the cost
// sums. Not for use outside daemon/store.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

class SqliteStore::Reader {
 public:
  explicit Reader(SqliteStore* store) : store_(store) {}
  ~Reader() {
    if (db_) {
      std::lock_guard<std::mutex> lock(store_->pool_mu_);
      store_->pool_.push_back(std::move(db_));
    }
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

namespace internal {

// A read transaction (a plain BEGIN: no write lock), so that several reads see one committed
// state: Begin() it on an acquired connection; it ends when this goes out of scope.
class ReadTransaction {
 public:
  explicit ReadTransaction(Db* db) : db_(db) {}
  ~ReadTransaction() {
    if (begun_) (void)db_->Exec("COMMIT");
  }
  Status Begin() {
    RETURN_IF_ERROR(db_->Exec("BEGIN"));
    begun_ = true;
    return OkStatus();
  }

 private:
  Db* db_;
  bool begun_ = false;
};

// Cost of each stage of `run_id` that has started attempts, by stage id: wall time over its own
// attempts (a running one counts up to `now_ms`), and that times the GPUs the stage asks for.
Result<std::map<int64_t, SqliteStore::StageCost>> ReadStageCosts(Db* db, int64_t run_id,
                                                                 int64_t now_ms);
// Run.wall_seconds: ended (or now) - started; 0 before it started.
void SetRunWallSeconds(int64_t now_ms, v1::Run* run);
// A page token or cursor as a number; empty is 0. InvalidArgument, naming `what`, when it is
// not one a page returned.
Result<int64_t> ParseCursor(const std::string& token, const char* what);
// The run's own fields (no stages). NotFound for an unknown run.
Status ReadRunFields(Db* db, int64_t run_id, v1::Run* run);
// Run.stage_counts: status name -> count over every stage of `run_id`.
Status ReadStageCounts(Db* db, int64_t run_id, v1::Run* run);
// A stage's cached-from, latest metrics, artifacts and (with include_attempts) attempts.
Status FillStageDetails(Db* db, int64_t stage_id, const StageRow& row, bool include_attempts,
                        v1::Stage* out);

}  // namespace internal
}  // namespace longhaul::store

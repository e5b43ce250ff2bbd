// SqliteStore::Reader: the lease of a pooled read-only connection, for the store's own .cc
// files (client reads from any thread). Not part of the store's interface.
#pragma once

#include <memory>
#include <mutex>

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

}  // namespace longhaul::store

#include "daemon/store/checkpointer.h"

#include <chrono>

#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::store {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& path,
                                                                int threshold_frames) {
  ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::Open(path, /*create=*/false, /*read_only=*/false));
  // This connection never writes rows; its own commits (none) must not checkpoint either.
  sqlite3_wal_autocheckpoint(db->raw(), 0);
  return std::unique_ptr<WalCheckpointer>(new WalCheckpointer(std::move(db), threshold_frames));
}

WalCheckpointer::WalCheckpointer(std::unique_ptr<Db> db, int threshold_frames)
    : db_(std::move(db)), threshold_frames_(threshold_frames) {
  thread_ = std::thread([this] { Loop(); });
}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WalCheckpointer::Attach(Db* writer) {
  // Replaces the hook through which SQLite runs its automatic checkpoint.
  sqlite3_wal_hook(writer->raw(), &WalCheckpointer::OnCommit, this);
}

int WalCheckpointer::OnCommit(void* self, sqlite3*, const char*, int frames) {
  auto* c = static_cast<WalCheckpointer*>(self);
  if (frames < c->threshold_frames_) return SQLITE_OK;
  {
    std::lock_guard<std::mutex> lock(c->mu_);
    if (c->pending_) return SQLITE_OK;
    c->pending_ = true;
  }
  c->cv_.notify_one();
  return SQLITE_OK;
}

int64_t WalCheckpointer::checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

bool WalCheckpointer::CheckpointNow(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  // One under way may have started before the call: then wait for the one after it.
  int64_t want = done_ + (running_ ? 2 : 1);
  pending_ = true;
  cv_.notify_one();
  return done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [&] { return done_ >= want || stop_; }) &&
         done_ >= want;
}

void WalCheckpointer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return pending_ || stop_; });
    if (stop_) return;
    pending_ = false;
    running_ = true;
    lock.unlock();
    int log_frames = 0, copied = 0;
    int rc = sqlite3_wal_checkpoint_v2(db_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                       &log_frames, &copied);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      // Not fatal: the log keeps every commit, and the next checkpoint tries again.
      GetLogger("store")->warn("checkpoint of {}: {}", db_->path(), sqlite3_errmsg(db_->raw()));
    }
    lock.lock();
    running_ = false;
    ++done_;
    done_cv_.notify_all();
  }
}

}  // namespace longhaul::store

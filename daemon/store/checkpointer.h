// Copies the write-ahead log back into the database file on a thread of its own, so that the
// writer (the scheduler loop) never does: SQLite's automatic checkpoint runs inside the commit
// that pushes the log past 1,000 pages, on the committing thread. After a 100,000-stage
// submission that commit copied about 70 MB back before the submission could answer, and in a
// long run every few hundred batches paid for one.
//
// The writer connection's WAL hook (Attach) tells the checkpointer how many frames the log
// holds after each commit; past `threshold_frames` the thread runs a PASSIVE checkpoint on its
// own connection, which never blocks the writer or the readers and copies what no reader still
// needs. What it cannot copy yet (a reader on an older snapshot) is copied at a later one, as
// with SQLite's own. The last connection to close checkpoints whatever is left.
#pragma once

#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "daemon/store/sqlite.h"

namespace longhaul::store {

class WalCheckpointer {
 public:
  // SQLite's own default: 1,000 pages.
  static constexpr int kDefaultThresholdFrames = 1000;

  // Opens its own connection to `path` (which must exist, in WAL mode) and starts the thread.
  static Result<std::unique_ptr<WalCheckpointer>> Start(
      const std::string& path, int threshold_frames = kDefaultThresholdFrames);
  ~WalCheckpointer();  // stops the thread; a checkpoint under way finishes first
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Makes `writer` hand its checkpoints to this one (turns off its automatic checkpoint).
  // This must outlive `writer`'s commits.
  void Attach(Db* writer);

  // How many checkpoints have run so far.
  int64_t checkpoints() const;

  // Asks for a checkpoint now, whatever the log's size, and waits up to `timeout_ms` for it.
  // True once one ran after the call.
  bool CheckpointNow(int64_t timeout_ms);

 private:
  WalCheckpointer(std::unique_ptr<Db> db, int threshold_frames);
  static int OnCommit(void* self, sqlite3* db, const char* name, int frames);
  void Loop();

  std::unique_ptr<Db> db_;
  const int threshold_frames_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  bool pending_ = false;
  bool running_ = false;
  bool stop_ = false;
  int64_t done_ = 0;
  std::thread thread_;
};

}  // namespace longhaul::store

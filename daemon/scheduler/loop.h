// The scheduler's thread. Inputs (client calls, agent messages) are posted as tasks; the loop
// runs every pending task and every due timer as one batch inside one store transaction, then
// commits, then lets the scheduler send what the batch decided. It sleeps until the next task
// or the next deadline: no polling.
//
// Thread-safe: Post() and Call() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "core/memory_policy.h"
#include "core/status.h"
#include "daemon/metrics/metrics.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::scheduler {

class SchedulerLoop {
 public:
  SchedulerLoop(Scheduler* scheduler, store::SqliteStore* store, Clock* clock);
  ~SchedulerLoop();

  // Recovers the scheduler from the store, then starts the thread.
  Status Start();
  // Finishes the batch in progress and stops. Tasks not run yet get Cancelled.
  void Stop();

  // Runs `fn` on the loop; no answer.
  void Post(std::function<void()> fn);
  // Runs `fn` on the loop; `done` gets the status of the commit of its batch (on the loop's
  // thread, or at once with Cancelled when stopping).
  void PostThen(std::function<void()> fn, std::function<void(const Status&)> done) {
    Enqueue(Task{std::move(fn), std::move(done)});
  }

  // Runs `fn` on the loop and waits until the batch that ran it has committed. Returns fn's
  // result, or the commit's error (the batch's decisions were then not kept).
  template <typename T>
  Result<T> Call(std::function<Result<T>()> fn) {
    return RunAndWait<T>(std::move(fn), /*even_if_not_committed=*/false);
  }

  // As Call, for an `fn` that only reads: its result also when the batch's commit failed (a
  // full disk), so that /metrics shows what it can while the store cannot commit.
  template <typename T>
  Result<T> Read(std::function<Result<T>()> fn) {
    return RunAndWait<T>(std::move(fn), /*even_if_not_committed=*/true);
  }

  // True from a commit that failed because the store's disk is full (ResourceExhausted,
  // SQLite's "database or disk is full") until a commit succeeds with at least 16 MiB free on
  // the store's file system (statvfs): the loop logs one line when it starts and one when it
  // ends, and retries a failed batch with back-off (100 ms doubling to 5 s) instead of at once.
  // Nothing of a failed batch is acknowledged. store_error(): the last such error, "" when not
  // full.
  bool store_full() const { return store_full_.load(); }
  std::string store_error() const;

  // Batches committed so far (for benchmarks and tests).
  uint64_t batches() const;
  // True while the state is being reloaded after a recovery that failed (see recovering_).
  bool recovering() const;
  // Where to record each commit's duration (not owned; may be null). Call before Start().
  void set_metrics(metrics::CoordinatorMetrics* m) { metrics_ = m; }
  // What decides about freed memory at the loop's boundaries (not owned; may be null: none is
  // ever handed back): after each commit (the stages of the runs it evicted) and at each tick;
  // the loop also wakes for its deadline. Call before Start().
  void set_memory_policy(MemoryPolicy* m) { memory_ = m; }

 private:
  struct Task {
    std::function<void()> run;
    std::function<void(const Status&)> done;  // may be empty
    int64_t posted_ms = 0;
    bool read_only = false;  // Read(): runs even while the loop is recovering
  };
  void Enqueue(Task task);
  template <typename T>
  Result<T> RunAndWait(std::function<Result<T>()> fn, bool even_if_not_committed) {
    auto promise = std::make_shared<std::promise<Result<T>>>();
    auto result = std::make_shared<std::optional<Result<T>>>();
    Enqueue(Task{[fn, result] { *result = fn(); },
                 [promise, result, even_if_not_committed](const Status& commit) {
                   if (!commit.ok() && !(even_if_not_committed && result->has_value())) {
                     promise->set_value(commit);
                   } else if (result->has_value()) {
                     promise->set_value(std::move(**result));
                   } else {
                     promise->set_value(absl::CancelledError("the coordinator is stopping"));
                   }
                 },
                 0, even_if_not_committed});
    return promise->get_future().get();
  }
  void Run();
  Status RunBatch(std::deque<Task>& tasks, int64_t lag_ms);
  // Begin, Scheduler::Recover, FlushToStore, Commit; rolled back when any fails.
  Status RecoverFromStore();
  // While recovering: waits out the back-off (answering callers meanwhile), then recovers
  // again. True once a recovery committed; false after another failure or when stopping.
  bool RetryRecovery();
  // While recovering: answers every queued task that has a caller waiting, with the recovery's
  // error (a Read() runs first and gets its value); tasks without one stay queued.
  void AnswerWhileRecovering();
  // After a commit failed on a full disk: notes it (NoteFull) and waits out the back-off.
  void NoteFullStore(const Status& st);
  void NoteFull(const Status& st);
  void NoteCommitted();
  // Scheduler::AfterCommit, then the memory policy's turn.
  void AfterCommit();
  // The earlier of the scheduler's and the memory policy's deadlines.
  std::optional<int64_t> NextDeadline() const;

  Scheduler* scheduler_;
  store::SqliteStore* store_;
  Clock* clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  size_t waiting_callers_ = 0;  // tasks in tasks_ with a `done`
  bool stopping_ = false;
  // A recovery after a failed commit failed too: the model is not the store's. Until a
  // recovery commits, no task runs (callers get recover_error_) and it is retried with
  // back-off (100 ms doubling to 5 s). All guarded by mu_.
  bool recovering_ = false;
  Status recover_error_;
  int recover_failures_ = 0;
  int64_t recover_backoff_ms_ = 0;
  uint64_t batches_ = 0;
  std::atomic<bool> store_full_ = false;
  std::string store_error_;      // guarded by mu_
  int64_t backoff_ms_ = 0;       // the loop's thread only
  uint64_t failed_commits_ = 0;  // in the current full episode; the loop's thread only
  metrics::CoordinatorMetrics* metrics_ = nullptr;
  MemoryPolicy* memory_ = nullptr;
  std::thread thread_;
};

}  // namespace longhaul::scheduler

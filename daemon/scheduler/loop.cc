#include "daemon/scheduler/loop.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::scheduler {
namespace {

constexpr size_t kMaxTasksPerBatch = 2000;
constexpr int64_t kFullBackoffFirstMs = 100;
constexpr int64_t kFullBackoffMaxMs = 5'000;
// Between attempts to reload the state after a recovery that failed.
constexpr int64_t kRecoverBackoffFirstMs = 100;
constexpr int64_t kRecoverBackoffMaxMs = 5'000;
// A full-disk episode ends once the store's file system has this much free again.
constexpr int64_t kStoreRoomBytes = 16 << 20;

// Bytes free to unprivileged writers on the file system of `path`; -1 when statvfs fails.
int64_t FreeBytes(const std::string& path) {
  struct statvfs st;
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &st) != 0) return -1;
  return static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize);
}

}  // namespace

SchedulerLoop::SchedulerLoop(Scheduler* scheduler, store::SqliteStore* store, Clock* clock)
    : scheduler_(scheduler), store_(store), clock_(clock) {}

SchedulerLoop::~SchedulerLoop() { Stop(); }

void SchedulerLoop::AfterCommit() {
  size_t evicted_stages = scheduler_->AfterCommit();
  if (memory_ == nullptr) return;
  memory_->AfterCommit(evicted_stages, [this] { scheduler_->ShrinkToFit(); });
}

std::optional<int64_t> SchedulerLoop::NextDeadline() const {
  std::optional<int64_t> next = scheduler_->NextDeadline();
  std::optional<int64_t> memory = memory_ != nullptr ? memory_->NextDeadlineMs() : std::nullopt;
  if (!next || !memory) return next ? next : memory;
  return std::min(*next, *memory);
}

Status SchedulerLoop::Start() {
  RETURN_IF_ERROR(RecoverFromStore());
  AfterCommit();
  thread_ = std::thread([this] { Run(); });
  return OkStatus();
}

Status SchedulerLoop::RecoverFromStore() {
  RETURN_IF_ERROR(store_->Begin());
  Status st = scheduler_->Recover();
  if (st.ok()) st = scheduler_->FlushToStore();
  if (st.ok()) st = store_->Commit();
  if (!st.ok()) store_->Rollback();
  return st;
}

void SchedulerLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::deque<Task> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(tasks_);
  }
  for (auto& t : left) {
    if (t.done) t.done(absl::CancelledError("the coordinator is stopping"));
  }
}

void SchedulerLoop::Post(std::function<void()> fn) { Enqueue(Task{std::move(fn), nullptr}); }

void SchedulerLoop::Enqueue(Task task) {
  task.posted_ms = clock_->NowMs();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      if (task.done) task.done(absl::CancelledError("the coordinator is stopping"));
      return;
    }
    if (task.done) ++waiting_callers_;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

uint64_t SchedulerLoop::batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

bool SchedulerLoop::recovering() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recovering_;
}

void SchedulerLoop::Run() {
  auto log = GetLogger("scheduler");
  for (;;) {
    if (recovering() && !RetryRecovery()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      continue;
    }
    std::deque<Task> batch;
    int64_t lag_ms = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        if (stopping_) return;
        if (!tasks_.empty()) break;
        std::optional<int64_t> deadline = NextDeadline();
        int64_t now = clock_->NowMs();
        if (deadline && *deadline <= now) break;
        if (deadline) {
          cv_.wait_for(lock, std::chrono::milliseconds(*deadline - now));
          int64_t late = clock_->NowMs() - *deadline;
          if (tasks_.empty() && late > 0) lag_ms = late;
        } else {
          cv_.wait(lock);
        }
      }
      while (!tasks_.empty() && batch.size() < kMaxTasksPerBatch) {
        if (tasks_.front().done) --waiting_callers_;
        batch.push_back(std::move(tasks_.front()));
        tasks_.pop_front();
      }
    }
    if (!batch.empty()) {
      // A task that waited long in the queue means the loop itself was held up.
      lag_ms = std::max(lag_ms, clock_->NowMs() - batch.front().posted_ms);
    }
    Status st = RunBatch(batch, lag_ms);
    if (!st.ok() && !store_->FileCheck().ok()) {
      // The database file is gone from under us (SqliteStore::FileCheck, logged once there):
      // nothing can be committed again, so refuse every task and do not reload from the file.
      for (auto& t : batch) {
        if (t.done) t.done(st);
      }
      std::unique_lock<std::mutex> lock(mu_);
      store_error_ = ToStd(st.message());
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_ || !tasks_.empty(); });
      continue;
    }
    if (!st.ok()) {
      bool full = absl::IsResourceExhausted(st);
      if (!full) {
        log->error("store commit failed: {}; reloading state from the store",
                   ToStd(st.message()));
      } else if (!store_full_) {
        log->error("store full: {}; nothing is acknowledged until a commit succeeds; retrying "
                   "with back-off until space returns",
                   ToStd(st.message()));
      }
      for (auto& t : batch) {
        if (t.done) t.done(st);
      }
      // Whatever the batch decided is gone; start again from the last committed state. Agents
      // reconnect and report, and unacknowledged events are sent again.
      Status rec = RecoverFromStore();
      if (!rec.ok()) {
        // The model may be half loaded, or loaded with what it fixed on loading not stored:
        // nothing runs on it until a recovery commits (RetryRecovery).
        log->error(
            "recovery after a failed commit failed too: {}; recovering again with "
            "back-off, no task runs until it succeeds",
            ToStd(rec.message()));
        std::lock_guard<std::mutex> lock(mu_);
        recovering_ = true;
        recover_error_ = rec;
        recover_failures_ = 1;
        recover_backoff_ms_ = kRecoverBackoffFirstMs;
      }
      if (full && rec.ok()) NoteFullStore(st);
      if (full && !rec.ok()) NoteFull(st);
      continue;
    }
    NoteCommitted();
    for (auto& t : batch) {
      if (t.done) t.done(OkStatus());
    }
    // Answered: now copy back what the commit logged, if that is due (SqliteStore).
    store_->CheckpointIfDue();
  }
}

std::string SchedulerLoop::store_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return store_error_;
}

void SchedulerLoop::NoteFull(const Status& st) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    store_error_ = ToStd(st.message());
  }
  store_full_ = true;
  ++failed_commits_;
  backoff_ms_ = backoff_ms_ == 0 ? kFullBackoffFirstMs
                                 : std::min(kFullBackoffMaxMs, backoff_ms_ * 2);
}

void SchedulerLoop::NoteFullStore(const Status& st) {
  NoteFull(st);
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(backoff_ms_), [this] { return stopping_; });
}

bool SchedulerLoop::RetryRecovery() {
  auto log = GetLogger("scheduler");
  int64_t wait_ms = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    wait_ms = recover_backoff_ms_;
  }
  // Callers that wait are answered at once, not after the back-off.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    AnswerWhileRecovering();
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_until(lock, deadline, [this] { return stopping_ || waiting_callers_ > 0; })) {
      break;  // the back-off is over
    }
    if (stopping_) return false;
  }
  Status rec = RecoverFromStore();
  if (rec.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      log->info("state recovered from the store after {} failed recovery attempt(s)",
                recover_failures_);
      recovering_ = false;
      recover_error_ = OkStatus();
      recover_failures_ = 0;
      recover_backoff_ms_ = 0;
    }
    NoteCommitted();
    return true;
  }
  if (absl::IsResourceExhausted(rec)) NoteFull(rec);
  std::lock_guard<std::mutex> lock(mu_);
  ++recover_failures_;
  recover_error_ = rec;
  recover_backoff_ms_ = std::min(kRecoverBackoffMaxMs, recover_backoff_ms_ * 2);
  // One line at the 1st, 2nd, 4th, 8th, ... failure: a long outage does not flood the log.
  if ((recover_failures_ & (recover_failures_ - 1)) == 0) {
    log->error("recovery failed again ({} attempts): {}; next attempt in {} ms", recover_failures_,
               ToStd(rec.message()), recover_backoff_ms_);
  }
  return false;
}

void SchedulerLoop::AnswerWhileRecovering() {
  std::deque<Task> callers;
  Status why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (waiting_callers_ == 0) return;
    // A full disk keeps its code (/readyz and callers say so); anything else is "try again".
    why = absl::IsResourceExhausted(recover_error_) || absl::IsDataLoss(recover_error_)
              ? recover_error_
              : absl::UnavailableError(
                    StrCat("the coordinator is reloading its state from the store after a failed "
                           "commit (",
                           recover_error_.message(), "); try again"));
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      if (it->done) {
        callers.push_back(std::move(*it));
        it = tasks_.erase(it);
      } else {
        ++it;
      }
    }
    waiting_callers_ = 0;
  }
  for (auto& t : callers) {
    // A read (Read()) gets what the model has; nothing else runs on it.
    if (t.read_only) t.run();
    t.done(why);
  }
}

void SchedulerLoop::NoteCommitted() {
  if (!store_full_) return;
  // On a disk that stays full, a commit may still fit in what the failed one's rollback freed:
  // the episode ends only once the file system has room again, not at each such commit (one
  // episode, one line each way and /readyz 503 throughout, not a flap per commit).
  int64_t free = FreeBytes(store_->path());
  if (free >= 0 && free < kStoreRoomBytes) return;
  GetLogger("scheduler")->info("store writable again after {} failed commit(s)",
                               failed_commits_);
  store_full_ = false;
  failed_commits_ = 0;
  backoff_ms_ = 0;
  std::lock_guard<std::mutex> lock(mu_);
  store_error_.clear();
}

Status SchedulerLoop::RunBatch(std::deque<Task>& tasks, int64_t lag_ms) {
  RETURN_IF_ERROR(store_->Begin());
  if (memory_ != nullptr) memory_->OnTick();
  scheduler_->Tick(lag_ms);
  for (auto& t : tasks) t.run();
  scheduler_->Dispatch();
  Status st = scheduler_->FlushToStore();
  if (st.ok()) {
    auto begin = std::chrono::steady_clock::now();
    st = store_->Commit();
    if (st.ok() && metrics_ != nullptr) {
      metrics_->sqlite_commit_seconds.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    }
  }
  if (!st.ok()) {
    store_->Rollback();
    return st;
  }
  AfterCommit();
  std::lock_guard<std::mutex> lock(mu_);
  ++batches_;
  return OkStatus();
}

}  // namespace longhaul::scheduler

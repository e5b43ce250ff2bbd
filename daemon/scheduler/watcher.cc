#include "daemon/scheduler/watcher.h"

#include <chrono>

#include "proto/stage_merge.h"

namespace longhaul::scheduler {

void Watcher::Push(const v1::RunUpdate& update, bool final) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return;
  if (update.snapshot()) {
    pending_.Clear();
    sent_ = 0;
    unsent_.clear();
    snapshot_start_ = true;
    in_snapshot_ = true;
  }
  // Keep the newest run fields; a stage not yet sent is replaced in place, any other queued.
  google::protobuf::RepeatedPtrField<v1::Stage> stages;
  stages.Swap(pending_.mutable_stages());
  pending_ = update.run();
  pending_.clear_stages();
  pending_.mutable_stages()->Swap(&stages);
  for (const v1::Stage& s : update.run().stages()) {
    auto [it, added] = unsent_.try_emplace(s.name(), pending_.stages_size());
    if (added) {
      *pending_.add_stages() = s;
    } else {
      *pending_.mutable_stages(it->second) = s;
    }
  }
  has_pending_ = true;
  final_ = final_ || final;
  cv_.notify_all();
  if (on_push_) on_push_();
}

void Watcher::SetOnPush(std::function<void()> on_push) {
  std::lock_guard<std::mutex> lock(mu_);
  on_push_ = std::move(on_push);
}

bool Watcher::Next(v1::RunUpdate* out, bool* final, int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
               [this] { return has_pending_ || cancelled_; });
  if (!has_pending_ || cancelled_) return false;
  int size = pending_.stages_size();
  int end = EndOfPiece(pending_.stages(), sent_, size);
  out->Clear();
  v1::Run* run = out->mutable_run();
  google::protobuf::RepeatedPtrField<v1::Stage> stages;
  stages.Swap(pending_.mutable_stages());
  *run = pending_;  // the run fields only
  pending_.mutable_stages()->Swap(&stages);
  run->mutable_stages()->Reserve(end - sent_);
  for (int i = sent_; i < end; ++i) {
    v1::Stage* s = pending_.mutable_stages(i);
    unsent_.erase(s->name());
    run->mutable_stages()->Add(std::move(*s));
  }
  sent_ = end;
  out->set_snapshot(snapshot_start_);
  snapshot_start_ = false;
  bool drained = sent_ == size;
  if (drained) {
    pending_.clear_stages();
    sent_ = 0;
    has_pending_ = false;
    out->set_snapshot_complete(in_snapshot_);
    in_snapshot_ = false;
  }
  *final = final_ && drained;
  return true;
}

void Watcher::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  cv_.notify_all();
}

bool Watcher::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

}  // namespace longhaul::scheduler

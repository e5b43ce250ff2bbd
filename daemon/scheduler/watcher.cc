#include "daemon/scheduler/watcher.h"

#include <chrono>

namespace longhaul::scheduler {

void Watcher::Push(const v1::RunUpdate& update, bool final) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return;
  if (!pending_) {
    pending_ = update;
  } else {
    // Keep the newest run fields; merge stages by name.
    v1::RunUpdate merged = update;
    merged.set_snapshot(pending_->snapshot() || update.snapshot());
    merged.mutable_run()->clear_stages();
    for (const auto& old_stage : pending_->run().stages()) {
      bool replaced = false;
      for (const auto& s : update.run().stages()) {
        if (s.name() == old_stage.name()) replaced = true;
      }
      if (!replaced) *merged.mutable_run()->add_stages() = old_stage;
    }
    for (const auto& s : update.run().stages()) *merged.mutable_run()->add_stages() = s;
    pending_ = std::move(merged);
  }
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
               [this] { return pending_.has_value() || cancelled_; });
  if (!pending_ || cancelled_) return false;
  *out = std::move(*pending_);
  pending_.reset();
  *final = final_;
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

#include "core/memory_policy.h"

#include <atomic>

namespace longhaul {

namespace {

class SystemMemoryActions : public MemoryActions {
 public:
  void AdviseHugePages(const void* data, size_t bytes) override {
    longhaul::AdviseHugePages(data, bytes);
  }
  void ReturnFreedMemory() override { longhaul::ReturnFreedMemory(); }
  void ReturnFreedMemorySoon() override { longhaul::ReturnFreedMemorySoon(); }
};

std::atomic<MemoryPolicy*> installed_memory_policy{nullptr};

MemoryPolicy* DefaultMemoryPolicy() {
  static MemoryPolicy* policy = new MemoryPolicy(SystemClock::Get());
  return policy;
}

}  // namespace

MemoryActions* MemoryActions::System() {
  static MemoryActions* actions = new SystemMemoryActions();
  return actions;
}

MemoryPolicy::MemoryPolicy(const Clock* clock, MemoryActions* actions)
    : clock_(clock), actions_(actions) {}

void MemoryPolicy::AfterCommit(size_t freed_stages, const std::function<void()>& shrink) {
  if (freed_stages < kBigRunStages) return;
  shrink();
  Return();
  return_at_tick_ = true;
  // A return already asked for and not done yet serves this run too.
  if (!late_return_at_ms_) late_return_at_ms_ = clock_->NowMs() + kLateReturnMs;
}

void MemoryPolicy::OnTick() {
  bool late_due = late_return_at_ms_ && *late_return_at_ms_ <= clock_->NowMs();
  if (!return_at_tick_ && !late_due) return;
  return_at_tick_ = false;
  if (late_due) late_return_at_ms_.reset();
  Return();
}

std::optional<int64_t> MemoryPolicy::NextDeadlineMs() const { return late_return_at_ms_; }

void MemoryPolicy::AfterSubmit(size_t stages) {
  if (stages >= kBigRunStages) Return();
}

void MemoryPolicy::AfterBigRead() { actions_->ReturnFreedMemorySoon(); }

void MemoryPolicy::AdviseBigBuffer(const void* data, size_t bytes) {
  actions_->AdviseHugePages(data, bytes);
}

void MemoryPolicy::Return() { actions_->ReturnFreedMemory(); }

void NoteBigBuffer(const void* data, size_t bytes) {
  MemoryPolicy* policy = installed_memory_policy.load(std::memory_order_acquire);
  (policy != nullptr ? policy : DefaultMemoryPolicy())->AdviseBigBuffer(data, bytes);
}

void InstallMemoryPolicy(MemoryPolicy* policy) {
  installed_memory_policy.store(policy, std::memory_order_release);
}

void UninstallMemoryPolicy(MemoryPolicy* policy) {
  installed_memory_policy.compare_exchange_strong(policy, nullptr, std::memory_order_acq_rel);
}

}  // namespace longhaul

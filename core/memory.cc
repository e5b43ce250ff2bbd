#include "core/memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace longhaul {

namespace {

// The ranges AdviseHugePages hinted since the last ReturnFreedMemory. Never destroyed, like
// the deferred returner below: any thread may use them until the process exits.
struct HintedRanges {
  std::mutex mu;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;  // [first, last)
};

HintedRanges& Hinted() {
  static HintedRanges* hinted = new HintedRanges();
  return *hinted;
}

}  // namespace

void AdviseHugePages(const void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  auto start = reinterpret_cast<uintptr_t>(data);
  uintptr_t first = (start + kHuge - 1) & ~(kHuge - 1);
  uintptr_t last = (start + bytes) & ~(kHuge - 1);
  if (data == nullptr || last <= first) return;
  // Failure (EINVAL without THP) changes nothing: the range keeps its small pages.
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) != 0) return;
  HintedRanges& hinted = Hinted();
  std::lock_guard<std::mutex> lock(hinted.mu);
  hinted.ranges.emplace_back(first, last);
}

void ReturnFreedMemory() {
  // Take the hints back first: a hinted range inside a malloc arena keeps its hint after the
  // buffer is freed, and khugepaged would fill the pages the trim hands back in again. A
  // buffer still in use keeps the huge pages it has; what it has not touched yet gets small
  // ones. A range that is no longer mapped, or mapped again for something else, is harmless.
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  {
    HintedRanges& hinted = Hinted();
    std::lock_guard<std::mutex> lock(hinted.mu);
    ranges.swap(hinted.ranges);
  }
  for (const auto& [first, last] : ranges) {
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_NOHUGEPAGE);
  }
  (void)malloc_trim(0);
}

namespace {

// The thread behind ReturnFreedMemorySoon. Never destroyed: requests may come from any thread
// until the process exits.
class DeferredReturner {
 public:
  static DeferredReturner* Get() {
    static DeferredReturner* returner = new DeferredReturner();
    return returner;
  }

  void Request() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (due_) return;
      due_ = true;
    }
    cv_.notify_one();
  }

  int runs() const { return runs_.load(); }

 private:
  DeferredReturner() { std::thread([this] { Loop(); }).detach(); }

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return due_; });
      // Wait a little, so that what the requester's neighbours are still freeing (the answer
      // being sent, the next page of a read) is freed too, and a burst of requests costs one
      // trim. A request that comes while the trim runs makes one more.
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      lock.lock();
      due_ = false;
      lock.unlock();
      ReturnFreedMemory();
      runs_.fetch_add(1);
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool due_ = false;
  std::atomic<int> runs_{0};
};

}  // namespace

void ReturnFreedMemorySoon() { DeferredReturner::Get()->Request(); }

int DeferredMemoryReturns() { return DeferredReturner::Get()->runs(); }

HeapStats ReadHeapStats() {
  struct mallinfo2 info = mallinfo2();
  HeapStats stats;
  stats.in_use = info.uordblks + info.hblkhd;
  stats.free = info.fordblks;
  stats.mapped = info.hblkhd;
  return stats;
}

ResidentMemory ReadResidentMemory() {
  ResidentMemory m;
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (f == nullptr) return m;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long kb = 0;
    if (std::sscanf(line, "VmRSS: %lu kB", &kb) == 1) m.resident = size_t{kb} << 10;
    if (std::sscanf(line, "RssAnon: %lu kB", &kb) == 1) m.anonymous = size_t{kb} << 10;
  }
  std::fclose(f);
  return m;
}

void FixMallocThresholds() {
  // Setting either one turns glibc's dynamic adjustment of both off.
  (void)mallopt(M_MMAP_THRESHOLD, static_cast<int>(kOwnMappingBytes));
  (void)mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

}  // namespace longhaul

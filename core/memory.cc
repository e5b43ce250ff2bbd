#include "core/memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>

namespace longhaul {

void AdviseHugePages(const void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  auto start = reinterpret_cast<uintptr_t>(data);
  uintptr_t first = (start + kHuge - 1) & ~(kHuge - 1);
  uintptr_t last = (start + bytes) & ~(kHuge - 1);
  if (data == nullptr || last <= first) return;
  // Failure (EINVAL without THP) changes nothing: the range keeps its small pages.
  (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

void ReturnFreedMemory() { (void)malloc_trim(0); }

void FixMallocThresholds() {
  // Setting either one turns glibc's dynamic adjustment of both off.
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

}  // namespace longhaul

// Memory hints for big, short-lived buffers.
#pragma once

#include <cstddef>

namespace longhaul {

// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with transparent huge
// pages (madvise MADV_HUGEPAGE) before it is first written. A 100,000-stage workflow fills
// about 100 MB of freshly allocated vectors; in 4 KiB pages that is 25,000 page faults, which
// cost as much CPU as the parse itself on a virtual machine. Only a hint: smaller ranges,
// kernels without THP, or THP set to "never" are no-ops. Memory already touched keeps its pages.
// The hint belongs to the address range, not to the buffer: inside a malloc arena it outlives
// the buffer, and khugepaged (which by default collapses a 2 MiB range that has a single page
// present) fills freed memory back in with huge pages long after a trim. So the next
// ReturnFreedMemory takes every hint given since back; call it once the buffers are freed.
void AdviseHugePages(const void* data, size_t bytes);

// How many stages a run must have for its submission or its end to be worth handing freed
// memory back (ReturnFreedMemory): below it, the pages are reused soon enough.
inline constexpr size_t kReturnMemoryAfterStages = 1000;

// Takes back the huge page hints given since the last call (AdviseHugePages), then hands the
// free pages of every malloc arena back to the system (glibc's malloc_trim). After
// something big was freed (a 100,000-stage submission's parse and plan, a big run leaving
// memory), glibc otherwise keeps those pages, and the process's RSS stays at its peak. Costs a
// few milliseconds; call it once per such event, never per stage.
void ReturnFreedMemory();

// ReturnFreedMemory about a second from now, on a thread of its own; requests that come before
// it runs share it. For memory that other threads free after the event that made it garbage:
// the reads of a big run that has just ended, or any read that scanned a big run (freed
// between blocks that stay live, so that the thread's arena cannot shrink at its top and only
// a trim gives the pages back). Cheap to call: it only wakes that thread.
void ReturnFreedMemorySoon();

// What glibc's malloc holds (mallinfo2): in use by the program, free in its arenas (resident
// or not: a trim returns pages but keeps the address range), and in blocks mapped on their own.
struct HeapStats {
  size_t in_use = 0;
  size_t free = 0;
  size_t mapped = 0;
};
// Walks every arena's free lists under its lock: for a scrape, not a hot path.
HeapStats ReadHeapStats();

// The process's resident memory and its anonymous part (heap, stacks), from /proc/self/status;
// 0 where it cannot be read.
struct ResidentMemory {
  size_t resident = 0;
  size_t anonymous = 0;
};
ResidentMemory ReadResidentMemory();

// How many times the deferred return (ReturnFreedMemorySoon) has run: for tests.
int DeferredMemoryReturns();

// Blocks of this size or more get a mapping of their own from malloc once FixMallocThresholds
// ran (unless their arena has a free chunk that fits), and go back to the kernel when freed.
inline constexpr size_t kOwnMappingBytes = size_t{1} << 20;

// For a daemon that lives for months: fixes glibc's mmap and trim thresholds (kOwnMappingBytes,
// 1 MiB), which otherwise rise after the first big block is freed, up to 32 MiB and a 64 MiB
// trim threshold. With them raised, the free top of a thread's arena (where a gRPC thread
// parsed a 100,000-stage workflow) stays resident for good, since malloc_trim does not trim
// those tops. A low mmap threshold also gives most big buffers a mapping of their own, which
// goes back to the kernel, hint and all, when they are freed (an arena still serves a big
// block from a free chunk it has: hence ReturnFreedMemory's part). Call once, first thing in
// main.
void FixMallocThresholds();

}  // namespace longhaul

// When the coordinator hands freed memory back to the system, and which buffers it asks huge
// pages for. The allocator calls of core/memory.h are made here only, at the boundaries of the
// coordinator's work: the scheduler loop after a commit and at each tick, the client API after a
// submission, the store after a read that filled its cache. The code in between (the workflow
// parser, the planner, the scheduler) decides nothing about memory; the parser and the planner
// only say where they reserved a big buffer (NoteBigBuffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "core/clock.h"
#include "core/memory.h"

namespace longhaul {

// What a MemoryPolicy does to the allocator: core/memory.h's functions (System()), or a fake
// that records the calls in tests.
class MemoryActions {
 public:
  virtual ~MemoryActions() = default;
  virtual void AdviseHugePages(const void* data, size_t bytes) = 0;
  virtual void ReturnFreedMemory() = 0;
  virtual void ReturnFreedMemorySoon() = 0;

  // core/memory.h's functions. Process-wide; never destroyed.
  static MemoryActions* System();
};

class MemoryPolicy {
 public:
  // How many stages make a run big: its submission's parse and plan, or its end, are worth
  // handing the freed memory back (the same threshold as kReturnMemoryAfterStages).
  static constexpr size_t kBigRunStages = kReturnMemoryAfterStages;
  // After a big run ended, how long until the last return: what the gRPC threads free after the
  // run's end (the answers and reads that follow it) is freed by then.
  static constexpr int64_t kLateReturnMs = 1000;

  // `clock` and `actions` are not owned and outlive the policy.
  explicit MemoryPolicy(const Clock* clock, MemoryActions* actions = MemoryActions::System());

  // --- The scheduler loop's boundaries (its thread only).

  // After a batch committed: `freed_stages` stages of ended runs left the scheduler. When that
  // is a big run's worth (kBigRunStages), calls `shrink` (the owners size their tables and
  // caches to what is left), hands the free pages back at once, and asks for two more returns:
  // at the next tick (the answers about the run still being sent then are freed) and
  // kLateReturnMs from now. Below it, does nothing: the pages are reused soon enough.
  void AfterCommit(size_t freed_stages, const std::function<void()>& shrink);

  // At the start of every batch (a tick of the loop): the returns asked for that are due, at
  // most one trim whatever is due.
  void OnTick();

  // When the loop must tick for the late return asked for; nullopt: none pending. The return at
  // the next tick waits for whatever tick comes next: it wakes nothing.
  std::optional<int64_t> NextDeadlineMs() const;

  // --- The other threads' boundaries (thread-safe).

  // After a submission of `stages` stages was stored and its parse and plan freed (the run
  // keeps its own compact state): for a big run, hands the pages back at once, on the caller's
  // thread, so the coordinator holds what the run needs.
  void AfterSubmit(size_t stages);

  // After a reader emptied a big page cache (a read that scanned a big run), on any thread:
  // the pages are freed between blocks that stay live, so that only a trim returns them; a
  // deferred one (ReturnFreedMemorySoon), which a burst of reads shares.
  void AfterBigRead();

  // A buffer of `bytes` at `data` was just reserved and is about to be filled at once (a big
  // workflow's parse, its plan): asks huge pages for it. The hint is taken back at the next
  // return (core/memory.h, AdviseHugePages).
  void AdviseBigBuffer(const void* data, size_t bytes);

 private:
  void Return();

  const Clock* clock_;
  MemoryActions* actions_;
  bool return_at_tick_ = false;
  std::optional<int64_t> late_return_at_ms_;
};

// The hook for code without a policy at hand (the workflow parser, the planner): a buffer of
// `bytes` at `data` was just reserved and is about to be filled. Goes to the installed policy's
// AdviseBigBuffer; with none installed (the CLI's `validate`, tests), to a process-wide default
// policy of the system clock and core/memory.h's functions.
void NoteBigBuffer(const void* data, size_t bytes);

// Makes `policy` the one NoteBigBuffer consults (longhauld's, while it runs). Uninstall with the
// same pointer; uninstalling a policy that is no longer installed does nothing.
void InstallMemoryPolicy(MemoryPolicy* policy);
void UninstallMemoryPolicy(MemoryPolicy* policy);

}  // namespace longhaul

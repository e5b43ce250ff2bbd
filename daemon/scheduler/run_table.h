// The runs in the scheduler's memory (RunState, by id: the active ones, and an ended one until
// the batch that ended it has committed), and two indexes into them: the live attempts by id
// (those that have not ended), and each stage's run by stage id (what a retry timer, which
// carries a stage id, finds its stage by).
//
// It is bookkeeping only: it decides nothing about a run. The scheduler adds and removes runs
// and attempts as they start and end, and keeps the indexes true by telling it; a run removed
// takes its index entries along.
//
// The whole table is replaced when the scheduler reloads its state (Recover).
//
// Thread-safety: none; the scheduler's loop thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "daemon/scheduler/model.h"

namespace longhaul::scheduler {

class RunTable {
 public:
  using Runs = std::map<int64_t, std::unique_ptr<RunState>>;
  using LiveAttempts = std::unordered_map<int64_t, AttemptState*>;

  // Every run in memory, by id in id order: `for (const auto& [id, run] : table)`. The runs
  // themselves may be changed; which runs are in memory changes only through Add and Remove.
  Runs::const_iterator begin() const { return runs_.begin(); }
  Runs::const_iterator end() const { return runs_.end(); }
  size_t size() const { return runs_.size(); }

  // The run `run_id`; null when it is not in memory.
  RunState* Find(int64_t run_id) const;
  // Stage `index` of run `run_id`, which must be in memory (std::out_of_range otherwise): what a
  // ReadyQueue entry names.
  StageState* StageAt(int64_t run_id, int index) const;
  // Takes in `run` (its id not in memory yet) and indexes the stages it already holds; a stage
  // built after that is indexed with IndexStage.
  RunState* Add(std::unique_ptr<RunState> run);
  // Drops run `run_id` and every index entry into it (its stages, its live attempts). Nothing
  // when it is not in memory.
  void Remove(int64_t run_id);
  // Sizes the indexes to what they hold, once a big run has left (they keep their capacity).
  void ShrinkIndexes();

  // --- stages ---
  // `s` (a stage of s->run, which is in the table) is found by its id from now on.
  void IndexStage(const StageState& s);
  // The run of stage `stage_id`; null when no run in memory has it.
  RunState* OwnerOfStage(int64_t stage_id) const;

  // --- live attempts ---
  // `a` has started (or was loaded running): found by its id until RemoveLiveAttempt.
  void AddLiveAttempt(AttemptState* a);
  // Attempt `attempt_id` has ended (it stays in its stage until its row is committed).
  void RemoveLiveAttempt(int64_t attempt_id);
  // The live attempt `attempt_id`; null when none.
  AttemptState* FindAttempt(int64_t attempt_id) const;
  // Attempt `attempt_id`, live or ended, while it is in memory; null when it is not.
  AttemptState* FindAnyAttempt(int64_t attempt_id) const;
  // Every live attempt, in no particular order.
  const LiveAttempts& live_attempts() const { return attempts_; }

 private:
  Runs runs_;
  LiveAttempts attempts_;
  absl::flat_hash_map<int64_t, RunState*> stage_owner_;  // stage id -> its run
};

}  // namespace longhaul::scheduler

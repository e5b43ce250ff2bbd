// Preemption (docs/scheduling.md, "Preemption"): which running attempts to stop so that a
// waiting stage fits, and the scheduler's record of the stops it asked for.
//
// ChooseVictims is the rule alone, apart from the scheduler, so that it can be tested on its
// own and reused by whatever else must take room back (the caller decides who may be a
// candidate). PreemptionBook remembers, for each waiting stage that caused a preemption, the
// attempts still being stopped for it: while any is, the stage holds the room they free and no
// second decision is made for it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "longhaul/v1/types.pb.h"

namespace longhaul::scheduler {

// A running attempt that may be stopped to make room.
struct PreemptCandidate {
  int64_t attempt_id = 0;
  std::string agent_id;
  int rank = 1;             // its run's class (workflow::PriorityRank: 0 high, 1 normal, 2 low)
  int64_t lost_gpu_ms = 0;  // its GPUs times the time since its last checkpoint (or its start)
  int64_t lost_ms = 0;      // that time alone: the order among attempts that hold no GPUs
  v1::Resources frees;      // what its end gives back to the agent (GPUs out of service aside)
};

// What is free on an agent the waiting stage may go to, as the dispatch pass sees it.
struct AgentRoom {
  std::string agent_id;
  v1::Resources free;
};

struct PreemptChoice {
  std::string agent_id;
  std::vector<PreemptCandidate> victims;  // in the order they were chosen
  int64_t lost_gpu_ms = 0;                // their sum
};

// The fewest, cheapest victims on one agent whose room, with what is free there, fits `need`:
//   - on each agent, candidates are taken lowest class first (highest rank), then least
//     progress lost (lost_gpu_ms, then lost_ms), then the youngest attempt, until the room
//     fits; then any taken victim the room fits without is given back, the costliest first,
//     so no more are stopped than needed;
//   - among agents, the set whose most important victim is of the lowest class, then the least
//     GPU time lost, then the fewest victims, then the agent id.
// Candidates on agents not in `agents` are ignored. nullopt when no agent's candidates can free
// enough.
std::optional<PreemptChoice> ChooseVictims(std::vector<PreemptCandidate> candidates,
                                           const std::vector<AgentRoom>& agents,
                                           const v1::Resources& need);

// "12.5 GPU-min" (one decimal), for reasons and the audit trail.
std::string GpuMinutesText(int64_t gpu_ms);

// "preempted by run 41 stage eval (high) at 10:52:03 UTC": what a preempted stage's waiting
// reason starts with until it is placed again. `by` is the preempting stage as the audit
// trail names it.
std::string PreemptedByText(const std::string& by, int64_t at_ms);

class PreemptionBook {
 public:
  using StageKey = std::pair<int64_t, int>;  // (run id, stage index)
  struct Pending {
    std::string agent_id;       // where the room is made
    std::set<int64_t> victims;  // attempts asked to stop and not ended yet
    std::string text;           // for the waiting stage's reason: "run 12 stage train (low)"
  };

  // The pending preemption of the stage; null when none (or every victim has ended).
  const Pending* Find(const StageKey& stage) const;
  // Records a decision. The victims must not be in another pending record.
  void Add(const StageKey& stage, Pending pending);
  // Attempt `attempt_id` ended (however): it is no longer waited for. A record left with no
  // victims is dropped, and its stage may preempt again should it still find no room.
  void Ended(int64_t attempt_id);
  // Whether `attempt_id` is a victim being stopped.
  bool IsVictim(int64_t attempt_id) const { return by_victim_.count(attempt_id) > 0; }
  void Clear();

 private:
  std::map<StageKey, Pending> by_stage_;
  std::map<int64_t, StageKey> by_victim_;
};

}  // namespace longhaul::scheduler

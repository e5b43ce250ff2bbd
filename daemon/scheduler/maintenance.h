// Maintenance windows of agents (docs/scheduling.md, "Maintenance"): `longhaul agent drain
// AGENT --at TIME` keeps new attempts off the agent that could not end before TIME, and at TIME
// what still runs there is stopped and goes back to the queue (no retry spent). This file holds
// the drains and the rule, apart from the scheduler so that they can be tested on their own;
// maintenance_sched.cc applies them.
//
// The fit rule: an attempt of a stage started at `now` ends, at the latest, at now + timeout +
// grace (the timeout stops it, the grace bounds its SIGTERM). It may start on an agent that
// drains at T only when that is <= T. A stage without a timeout has no bound, so it never fits.
// The ETA the scheduler keeps (RateEstimator) exists only for an attempt that runs and reports
// progress, not for one about to start, so the rule does not use it.
//
// Thread-safety: none (the scheduler's loop thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/store/rows.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::scheduler {

// The failure kind of an attempt a drain stopped (its stage goes back to the queue).
inline constexpr std::string_view kDrainStopKind = "drain";

// The longest one attempt of `spec` can take: its timeout plus its grace; nullopt without a
// timeout.
std::optional<int64_t> AttemptBoundMs(const workflow::StageSpec& spec);

// Whether an attempt bounded by `bound_ms` (nullopt: unbounded) and started at `now_ms` ends by
// `drain`'s time.
bool FitsBeforeDrain(const store::AgentDrainRow& drain, std::optional<int64_t> bound_ms,
                     int64_t now_ms);

// "14:00 UTC" when `at_ms` falls on the same UTC day as `now_ms`, else "2026-12-06 14:00 UTC".
std::string FormatDrainTime(int64_t at_ms, int64_t now_ms);

// Why a stage waits instead of going to the drained agent:
//   "agent n1 drains at 14:00 UTC (kernel upgrade): this stage's timeout 6h does not fit"
//   "agent n1 drains at 14:00 UTC (kernel upgrade): this stage has no timeout"
//   "agent n1 is drained since 14:00 UTC (kernel upgrade)"
std::string DrainWaitReason(const store::AgentDrainRow& drain, const workflow::StageSpec& spec,
                            int64_t now_ms);

// The detail of an attempt stopped at the drain's time: "agent n1 drained at 14:00 UTC (kernel
// upgrade)".
std::string DrainStopDetail(const store::AgentDrainRow& drain, int64_t now_ms);

// The drains in force, by agent id. Each Set or Clear bumps the agent's generation, so that a
// timer armed for an earlier drain of the agent is known stale.
class Maintenance {
 public:
  void Load(std::vector<store::AgentDrainRow> rows);
  // Replaces the agent's drain; returns its new generation.
  uint64_t Set(store::AgentDrainRow row);
  // False when the agent had none.
  bool Clear(const std::string& agent_id);
  const store::AgentDrainRow* Find(std::string_view agent_id) const;
  uint64_t generation(std::string_view agent_id) const;
  bool empty() const { return drains_.empty(); }
  const std::map<std::string, store::AgentDrainRow, std::less<>>& all() const { return drains_; }

 private:
  std::map<std::string, store::AgentDrainRow, std::less<>> drains_;
  std::map<std::string, uint64_t, std::less<>> generations_;
};

}  // namespace longhaul::scheduler

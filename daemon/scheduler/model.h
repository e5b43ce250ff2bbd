// The scheduler's in-memory model of active runs and connected agents. Owned and touched only
// by the scheduler loop thread. Rows mirror the store; `dirty` marks what must be written
// before the loop's next commit.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/scheduler/early_stop.h"
#include "daemon/scheduler/rate_estimator.h"
#include "daemon/store/rows.h"
#include "daemon/workflow/workflow.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::scheduler {

struct RunState;
struct StageState;

// An attempt's share of its run's GPU totals (store::RunTotals): an ended attempt its wall time
// times its stage's GPUs; a running one its GPUs, and those times its start.
struct GpuUse {
  int64_t ended_ms = 0;
  int64_t running = 0;
  int64_t start_ms = 0;
  bool operator==(const GpuUse&) const = default;
};

struct AttemptState {
  store::AttemptRow row;
  StageState* stage = nullptr;
  v1::Resources held;     // released when the attempt ends
  std::vector<int> gpus;  // device indices held on the agent
  bool holds_resources = false;
  std::string kill_reason;  // set when longhaul asked the agent to stop it
  int64_t last_progress_ms = 0;
  uint64_t timer_gen = 0;       // bumps to invalidate this attempt's timers
  bool exit_reported = false;   // Hello said it ended; AttemptExited will follow
  bool release_queued = false;  // ended; released from memory after the next commit
  std::string kill_detail;      // "ran longer than 30s", for the attempt's reason
  int64_t checkpoint_at_ms = 0;  // when it last reported a checkpoint (0: never)
  bool dirty = false;
  // What this attempt adds to its run's GPU totals as last written (see RunState).
  GpuUse counted;
};

// Where a stage's next attempts must not go, after its node failed (node_fail): agents (a
// local agent is its node), and nodes for an agent that submits to a cluster (Slurm's
// --exclude). Kept in memory only; allocated for the few stages that need it.
struct Avoidance {
  std::set<std::string> agents;
  std::vector<std::string> nodes;
};

// `row` holds what changes while the run goes on. The columns fixed at submission that the
// scheduler never reads (the fingerprint, needs and description) are dropped from it once the
// row is stored: snapshots take needs and description from `spec`, and the fingerprint is read
// from the store (GetRun).
// What only some stages need, allocated on first use: a stage that waits, or runs without
// progress, metrics or `resume`, and ends, costs none of it.
struct StageExtras {
  std::map<std::string, v1::Metric> latest_metrics;
  std::optional<RateEstimator> rate;  // from its first progress event
  std::string previous_agent;         // where the last attempt ran, for a `resume` stage
  // For a cached stage (row.cached_from_stage_id): the run and stage it reuses, for snapshots.
  int64_t cached_from_run_id = 0;
  std::string cached_from_stage;
  // Its last attempt was preempted (PreemptedByText), until an attempt of it starts again: the
  // start of its waiting reason.
  std::string preempted_by;
};

struct StageState {
  store::StageRow row;
  const workflow::StageSpec* spec = nullptr;  // points into run->workflow
  RunState* run = nullptr;
  int index = 0;                // in run->stages (topological order)
  std::vector<int> deps;        // indexes of stages it needs
  std::vector<int> dependents;  // indexes of stages that need it
  // Its attempts still in memory: the live one, and ended ones until their rows are committed
  // (then they are released: the store keeps them, and `ended_wall_ms` their wall time).
  std::vector<std::unique_ptr<AttemptState>> attempts;
  AttemptState* current = nullptr;  // the attempt that counts, while one runs
  int64_t ended_wall_ms = 0;        // wall time of the released attempts
  uint64_t retry_gen = 0;
  bool dirty = false;
  std::unique_ptr<Avoidance> avoid;     // null unless a node of it failed
  std::unique_ptr<StageExtras> extras;  // null until one of its fields is needed
  int64_t ready_at_ms = 0;              // when it last became ready; 0 once an attempt has started
  // Why its last attempt failed, while it waits to retry it ("" otherwise): what a service
  // that is no longer needed before its retry ends with.
  std::string retry_after;

  StageExtras& Extras() {
    if (!extras) extras = std::make_unique<StageExtras>();
    return *extras;
  }
};

struct RunState {
  store::RunRow row;
  workflow::Workflow workflow;
  std::vector<std::unique_ptr<StageState>> stages;
  // Indexes into `stages` sorted by name, for Find's binary search: 4 bytes a stage, where a
  // map from name to index cost 88.
  std::vector<int> by_name;
  bool cancel_requested = false;
  bool dirty = false;
  std::set<int> changed_stages;  // since the last watch update
  // How many of its stages are in each status, kept by the scheduler as statuses change, so
  // that "has the run ended?" and the gauges cost O(1), not a walk over every stage.
  std::array<int64_t, v1::StageStatus_ARRAYSIZE> status_count{};
  // The sum of its attempts' GpuUse. With status_count, written to the run's row as its totals
  // (store::RunTotals) at the end of each batch that changed either, so reads of the run's
  // counts and cost never walk its stages.
  GpuUse gpu;
  bool totals_dirty = false;
  // Its GPU-hour budget is reached (budget_sched.cc): its ready stages wait outside the ready
  // queue until an admin raises it. `budget_gen` invalidates its armed budget timers.
  bool budget_paused = false;
  uint64_t budget_gen = 0;
  // Its account's fair-share position (quota_sched.cc), which its ready stages are queued by;
  // set when its first stage is queued, changed only together with those entries.
  int share_pos = 0;
  bool share_pos_set = false;
  // What its ${tags.*} references resolved to at submission, by TagRefKey (tag_resolve.h).
  std::map<std::string, std::string> tag_values;
  // Its sweeps with `early_stop`, by the foreach stage's name: made on first use.
  std::map<std::string, std::unique_ptr<SweepJudge>> judges;

  StageState* Find(std::string_view name) {
    auto it =
        std::lower_bound(by_name.begin(), by_name.end(), name,
                         [this](int i, std::string_view n) { return stages[i]->spec->name < n; });
    return it == by_name.end() || stages[*it]->spec->name != name ? nullptr : stages[*it].get();
  }
  // Once `stages` holds every stage: sorts `by_name` and links each stage to the stages it
  // needs and to those that need it.
  void LinkStages();
};

struct AgentState {
  store::AgentRow row;
  uint64_t session = 0;  // 0: no live stream
  bool reachable = false;
  v1::Resources free;
  std::vector<bool> gpu_busy;
  std::vector<v1::GpuInfo> gpu_info;  // names and memory as the agent's Hello gave them
  // Its state dir is full, and its free bytes, as the last Hello or Heartbeat said.
  bool disk_full = false;
  int64_t state_free_bytes = 0;
  std::set<int64_t> attempts;       // attempt ids placed here and not ended
  std::set<int64_t> lost_attempts;  // declared lost while here; fenced if the agent returns
  uint64_t timer_gen = 0;
  bool dirty = false;
};

}  // namespace longhaul::scheduler

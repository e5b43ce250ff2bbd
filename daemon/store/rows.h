// The store's rows: what the scheduler keeps in memory and persists. Reads for clients are
// built as v1 protos directly (store.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/compact_fields.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::store {

struct RunRow {
  int64_t id = 0;
  int64_t workflow_id = 0;
  std::string workflow_name;
  std::string workflow_path;
  std::string workflow_text;  // filled on load (joined from workflows); the scheduler drops it
  v1::RunStatus status = v1::RUN_PENDING;
  std::map<std::string, std::string> params;     // every param's resolved value
  std::map<std::string, std::string> overrides;  // what --set changed
  std::optional<int64_t> parent_run_id;
  std::string from_stage;
  bool no_cache = false;
  std::string reason;
  int64_t created_at_ms = 0;
  std::optional<int64_t> started_at_ms;
  std::optional<int64_t> ended_at_ms;
  std::string description;  // the workflow's
  std::optional<int64_t> collected_at_ms;  // retention removed its logs, outputs and events
  // Who and how urgent (docs/scheduling.md): the submitter's token name ("local" without
  // tokens; "" for runs from before this was recorded), their team, the priority class.
  std::string user;
  std::string team;
  std::string priority = "normal";
  // The GPU-hour budget (none: no budget); `budget_noticed` the last threshold notified (0,
  // 80 or 100 percent), so a restart does not notify twice.
  std::optional<double> budget_gpu_hours;
  bool budget_hard = false;
  std::string budget_raised_by;
  int budget_noticed = 0;
  // Why a team's or workflow's budget pauses it ("" when none holds it), as last written.
  std::string budget_hold;
};

// A GPU-hour budget of every run of a team or a workflow name (docs/scheduling.md): its
// periods run from `anchor_ms` in steps of `period_ms`; `noticed` is the last threshold (0, 80
// or 100 percent) notified in the period that starts at `noticed_period_ms`.
struct ScopeBudgetRow {
  std::string scope;  // "team" or "workflow"
  std::string name;
  double gpu_hours = 0;
  bool hard = false;
  int64_t period_ms = 0;
  int64_t anchor_ms = 0;
  std::string set_by;
  int64_t set_at_ms = 0;
  int noticed = 0;
  int64_t noticed_period_ms = 0;
};

// A quota set at run time (longhaul quota): `rule` as --quota takes it after the '='
// ("gpus:4,borrow:8"), "" when the account's quota was removed.
struct QuotaRow {
  std::string account;  // "team:vision"
  std::string rule;
  std::string set_by;
  int64_t set_at_ms = 0;
};

// A run's totals, kept by the scheduler as its stages and attempts change and written with the
// batch that changed them, so that listing runs and a run's header cost the same for a run of
// 100,000 stages as for one of 10 (reading them from the stages and attempts grows with the
// run). GPU milliseconds: each ended attempt's wall time times its stage's GPUs, plus each
// running one's up to now, which is `gpus_running * now - gpu_start_ms_running`.
struct RunTotals {
  std::map<std::string, int64_t> stage_counts;  // status name -> stages in it
  int64_t gpu_ms_ended = 0;
  int64_t gpus_running = 0;
  int64_t gpu_start_ms_running = 0;  // sum of (start * GPUs) over the running attempts
  double GpuHoursAt(int64_t now_ms) const;
};

// An ended attempt's hold on GPUs, for quotas and fair share (LoadGpuUsage): who its run
// counts for, its stage's GPUs, and from its placement to its end.
struct GpuUsageRow {
  std::string user;
  std::string team;
  int32_t gpus = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};

struct ProgressRow {
  double done = 0;
  double total = 0;  // 0: unknown
  std::string unit;
  double rate = 0;
  double eta_seconds = -1;
  int64_t updated_at_ms = 0;
};

// One per stage of every running run stays in the coordinator's memory, so the text fields
// that most stages leave empty, or that the scheduler only writes, are LeanStrings (8 bytes
// while empty) and the progress a HeapOptional.
struct StageRow {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string name;
  InternedString kind = "task";
  int position = 0;  // topological index in the workflow
  v1::StageStatus status = v1::STAGE_WAITING;
  int attempt_count = 0;
  int retries_used = 0;  // automatic retries spent; a manual retry resets it
  // Automatic retries spent on infrastructure failures (preempted, node_fail, lost), counted
  // against retry.infra_limit instead; a manual retry resets it too.
  int infra_retries_used = 0;
  LeanString reason;
  LeanString cache_key;
  LeanString fingerprint_json = "{}";
  OptInt64 cached_from_stage_id;
  HeapMap<std::string, std::string> outputs;
  HeapOptional<ProgressRow> progress;
  LeanString last_message;
  LeanString last_message_level;
  OptInt64 next_retry_at_ms;
  LeanString checkpoint;
  OptInt64 checkpoint_step;
  OptInt64 started_at_ms;
  OptInt64 ended_at_ms;
  LeanString agent_id;
  int64_t malformed = 0;
  LeanString last_malformed;
  std::vector<std::string> needs;  // from the workflow, for display
  v1::Resources resources;         // what each attempt asks for
  InternedString plan_action;      // "run" or "reuse", decided at submission
  LeanString plan_reason;          // why
  LeanString description;          // from the workflow file
};

struct AttemptRow {
  int64_t id = 0;
  int64_t stage_id = 0;
  int64_t run_id = 0;
  int number = 0;
  std::string agent_id;
  v1::AttemptState state = v1::ATTEMPT_STARTING;
  std::string reason;
  std::optional<int64_t> exit_code;
  std::optional<int64_t> signal;
  std::optional<int64_t> pid;
  std::string output_dir;
  std::string start_blob;  // the serialized v1::StartAttempt, to send it again after a restart
  int64_t created_at_ms = 0;
  std::optional<int64_t> started_at_ms;
  std::optional<int64_t> ended_at_ms;
  int64_t events = 0;  // highest seq stored
  int64_t malformed = 0;
  std::string last_malformed;
  std::optional<int64_t> ready_at_ms;  // when its stage last became ready before it was made
  // The stop longhauld asked of it, kept so that it ends as asked across a restart: the kind
  // ("preempted", "drain", "budget", "timeout", ...; "" when none was asked), the reason text
  // ("room for run 12 stage train (high)"), when, and for a preemption the stage (stages.id)
  // it makes room for.
  std::string stop_kind;
  std::string stop_reason;
  std::optional<int64_t> stop_at_ms;
  std::optional<int64_t> stop_for_stage_id;
  bool borrowed = false;  // started beyond its team's guaranteed GPUs (v1::Attempt.borrowed)
};

struct EventRow {
  int64_t seq = 0;
  int64_t ts_ms = 0;
  std::string type;  // progress, metric, ..., or "malformed"
  std::string line;
};

struct MetricRow {
  int64_t stage_id = 0;
  int64_t attempt_id = 0;
  int attempt = 0;
  std::string name;
  double value = 0;
  std::optional<int64_t> step;
  int64_t ts_ms = 0;
};

struct ArtifactRow {
  int64_t stage_id = 0;
  int64_t attempt_id = 0;
  int attempt = 0;
  std::string name;
  std::string path;  // absolute on agent_id's node
  std::optional<int64_t> bytes;
  std::string agent_id;
  int64_t ts_ms = 0;
};

struct AgentRow {
  std::string id;
  std::string hostname;
  v1::Resources resources;
  std::map<std::string, std::string> labels;
  std::string version;
  std::string executor;
  std::string data_dir;
  std::vector<std::string> shared_paths;  // --shared-path prefixes, as its last Hello said
  v1::AgentState state = v1::AGENT_CONNECTED;
  int64_t first_seen_ms = 0;
  int64_t last_seen_ms = 0;
  int64_t connected_at_ms = 0;
};

// A GPU of an agent as the coordinator keeps it (docs/gpus.md, "Health and quarantine").
struct GpuRow {
  std::string agent_id;
  int gpu_index = 0;
  std::string uuid;
  std::string health = "ok";  // ok, quarantined, drained
  std::string reason;
  int64_t since_ms = 0;
  std::string by;  // "agent" for a fault, the principal for a drain
  int passes = 0;  // pre-flights passed since it was quarantined
};

// An agent's maintenance window (docs/scheduling.md, "Maintenance").
struct AgentDrainRow {
  std::string agent_id;
  int64_t at_ms = 0;
  std::string reason;
  std::string by;
  int64_t set_at_ms = 0;
};

// GPUs of an agent held for one user or team for a time window (docs/scheduling.md,
// "Reservations"). `gpus` is a count (0 in the store never; "all" is the agent's count when it
// was set). A cancelled one has cancelled_at_ms > 0.
struct ReservationRow {
  int64_t id = 0;
  std::string agent_id;
  int gpus = 0;
  std::string holder_kind;  // "user" or "team"
  std::string holder;
  int64_t from_ms = 0;
  int64_t until_ms = 0;
  std::string reason;
  std::string by;
  int64_t set_at_ms = 0;
  int64_t cancelled_at_ms = 0;
  std::string cancelled_by;
  std::string cancel_reason;
};

// One attempt's telemetry of one GPU (GpuSeries as JSON, daemon/scheduler/gpu_series.h).
struct GpuSeriesRow {
  int64_t attempt_id = 0;
  int gpu_index = 0;
  std::string uuid;
  std::string series_json;
  // Its summary, kept beside it so that reading a stage never parses series.
  int64_t sampled_ms = 0;
  double util_ms = 0;  // sum of SM utilisation (%) x time, over the time it is known
  int64_t util_known_ms = 0;
  int64_t peak_mem = -1, mem_total = -1;
  double energy_wh = 0;
  int64_t idle_ms = 0;
};

// A notification to one sink (docs/operations.md, "Notifications"). `sink` is the sink's
// description as JSON, `payload` the exact bytes to send, so that a notification pending at a
// restart is sent as it was decided, whatever the flags are now.
struct NotificationRow {
  int64_t id = 0;
  std::string kind;  // run_failed, stage_failed, ...
  std::optional<int64_t> run_id;
  std::string stage;
  std::string sink;
  std::string payload;
  std::string state = "pending";  // pending, delivered, failed
  int tries = 0;
  std::string last_error;
  std::optional<int64_t> next_try_at_ms;
  int64_t created_at_ms = 0;
  std::optional<int64_t> delivered_at_ms;
};

// A succeeded stage of an earlier run that has a given cache key (for reuse).
struct CacheHit {
  int64_t stage_id = 0;
  int64_t run_id = 0;
  std::string stage_name;
  std::map<std::string, std::string> outputs;
  std::vector<ArtifactRow> artifacts;
  std::string fingerprint_json;
};

}  // namespace longhaul::store

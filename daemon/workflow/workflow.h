// The workflow file, v1 (docs/workflow-format.md): the parsed and validated model.
//
// ParseWorkflow() reads YAML text and returns a Workflow whose stages are in topological
// order, with `defaults` merged into every stage. Nothing here knows about runs, agents or
// the store; the scheduler and the CLI (`longhaul validate`) both link this library.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/compact_fields.h"
#include "core/status.h"
#include "daemon/workflow/run_policy.h"

namespace longhaul::workflow {

// 1-based line and column in the workflow file; 0 when unknown.
struct SourcePos {
  int line = 0;
  int column = 0;
};

// Failure kinds a retry policy can act on (`retry.on`).
// preempted, node_fail, oom and cancelled_outside come from a polled executor (docs/slurm.md).
inline constexpr std::string_view kFailureKinds[] = {
    "exit",      "signal",    "timeout", "stalled",           "lost",      "service_lost",
    "preempted", "node_fail", "oom",     "cancelled_outside", "gpu_fault", "gpu_idle"};

// Kinds where the infrastructure, not the stage, ended the attempt: the executor preempted it,
// its node failed, or its agent was lost. Their retries count against `retry.infra_limit`,
// not `retry.limit`, so that preemption does not spend the stage's own budget.
inline bool IsInfraFailure(std::string_view kind) {
  return kind == "preempted" || kind == "node_fail" || kind == "lost" || kind == "gpu_fault";
}

// A set of kFailureKinds as bits: two bytes a stage instead of a std::set's nodes, which
// counted in a 100,000-stage workflow.
class FailureKinds {
 public:
  static FailureKinds All() { return FailureKinds(kAll); }
  // What `retry.on` holds when the workflow does not say: every kind but "oom" and
  // "cancelled_outside", which a stage must name to retry on.
  static FailureKinds Default() {
    FailureKinds k = All();
    k.bits_ = static_cast<uint16_t>(k.bits_ & ~(1 << IndexOf("oom")) &
                                    ~(1 << IndexOf("cancelled_outside")));
    return k;
  }
  FailureKinds() = default;

  // 1 when `kind` is in the set, else 0 (as std::set::count).
  size_t count(std::string_view kind) const {
    int i = IndexOf(kind);
    return i >= 0 && (bits_ >> i & 1) ? 1 : 0;
  }
  // False (and no change) for a kind that is not in kFailureKinds.
  bool insert(std::string_view kind) {
    int i = IndexOf(kind);
    if (i < 0) return false;
    bits_ = static_cast<uint16_t>(bits_ | 1 << i);
    return true;
  }
  size_t size() const { return static_cast<size_t>(__builtin_popcount(bits_)); }
  // The kinds, for messages and tests.
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (std::string_view k : kFailureKinds) {
      if (count(k)) out.emplace(k);
    }
    return out;
  }
  bool operator==(const FailureKinds&) const = default;

 private:
  static_assert(std::size(kFailureKinds) <= 16, "FailureKinds holds 16 kinds");
  static constexpr uint16_t kAll = (1 << std::size(kFailureKinds)) - 1;
  explicit FailureKinds(uint16_t bits) : bits_(bits) {}
  static constexpr int IndexOf(std::string_view kind) {
    for (size_t i = 0; i < std::size(kFailureKinds); ++i) {
      if (kFailureKinds[i] == kind) return static_cast<int>(i);
    }
    return -1;
  }
  uint16_t bits_ = 0;
};

struct RetryPolicy {
  int limit = 0;                     // retries after the first attempt: at most limit + 1 attempts
  int infra_limit = 5;               // retries after infrastructure failures (IsInfraFailure)
  int64_t backoff_ms = 10'000;       // delay before retry n is backoff * 2^(n-1), jittered
  int64_t max_backoff_ms = 600'000;  // cap on that delay
  FailureKinds on = FailureKinds::Default();
  std::vector<int> exit_codes;  // when non-empty, an "exit" failure retries only for these
};

struct ResourceRequest {
  double cpus = 1;
  int64_t memory_bytes = 0;
  int gpus = 0;
};

enum class StageKind { kTask, kService };

// `node_selector`: agent labels a stage needs, sorted by key. An agent matches when it has
// every key with the same value (`longhaul-agent --label key=value`).
using NodeSelector = std::vector<std::pair<std::string, std::string>>;
// "{gpu: h200, zone: a}", for waiting reasons.
std::string FormatNodeSelector(const NodeSelector& selector);

// `early_stop` of a foreach stage (docs/sweeps.md, "Early stopping"): when to stop an item
// whose metric is losing. One per foreach stage, shared by its items.
struct EarlyStopSpec {
  enum class Rule { kAsha, kMedian };
  std::string sweep;      // the foreach stage's name as written ("train"): its items are the sweep
  std::string metric;     // a metric the items report with a step
  bool maximize = false;  // `mode: max`; `min` (the default) stops the larger values
  Rule rule = Rule::kAsha;
  std::vector<int64_t> rungs;  // ascending; asha: the steps it judges at; median: empty = all
  int eta = 2;                 // asha: keep the best 1/eta at each rung
  int min_items = 3;           // median: judge a step once this many items reached it
};

struct StageSpec {
  std::string name;
  SourcePos pos;  // of the stage's key
  StageKind kind = StageKind::kTask;
  std::vector<std::string> run;           // argv templates; run[0] is the program
  std::vector<std::string> needs;         // as written, in file order
  HeapMap<std::string, std::string> env;  // values are templates
  ResourceRequest resources;
  RetryPolicy retry;
  NodeSelector node_selector;  // empty: any agent
  OptInt64 timeout_ms;         // wall time of one attempt
  OptInt64 stall_timeout_ms;   // no progress event for this long: stalled
  OptInt64 ready_timeout_ms;   // service: no ready event for this long: failed
  // Its GPUs under 5 % SM utilisation this long: a notice, or (gpu_idle_fail) the attempt
  // fails as `gpu_idle` (docs/gpus.md, "Idle GPUs"). Unset: 15 minutes for a task that holds
  // GPUs, off for a service (a server is idle between requests); 0: off.
  OptInt64 gpu_idle_ms;
  int64_t grace_ms = 10'000;   // SIGTERM -> SIGKILL when stopping the stage
  bool resume = false;         // every attempt shares one output dir
  bool cache = true;           // `cache: false` opts out of reuse
  bool gpu_idle_fail = false;  // `on_gpu_idle: fail` (default: notify)
  // `preflight: true`: each attempt runs the agent's GPU check on its GPUs first and starts
  // only when they pass (docs/gpus.md, "Pre-flight before a stage"). Not in the cache key.
  bool preflight = false;
  // `preemptible: false`: a stage of a higher class never stops its attempts to take their
  // room (docs/scheduling.md, "Preemption"). Not in the cache key.
  bool preemptible = true;
  // `preempt_notice: DURATION`: before a stop to take its room (or a drain's, or a hard
  // budget's), the attempt is sent SIGUSR1 and a control line and given this long to write a
  // checkpoint; it is stopped at its first checkpoint after that or when the time is up
  // (docs/scheduling.md, "A notice before the stop"). Unset: stopped at once. Not in the
  // cache key.
  OptInt64 preempt_notice_ms;
  // `cache: {key_on: [engine_version, executable]}`: what of the environment its key also
  // covers (docs/caching.md, "key_on"); a mask of kKeyOn* bits, 0 for none.
  uint8_t cache_key_on = 0;
  // Rarely set, and held once per stage of every running run: 8 bytes each while empty.
  LeanString cache_version;  // bump to invalidate cached results
  LeanString description;
  // A foreach item whose stage declares `early_stop`: the rule, shared by the sweep's items.
  std::shared_ptr<const EarlyStopSpec> early_stop;
};

// The names `cache: {key_on: [...]}` accepts, and their bits in StageSpec::cache_key_on.
inline constexpr uint8_t kKeyOnEngineVersion = 1;
inline constexpr uint8_t kKeyOnExecutable = 2;
inline constexpr std::string_view kKeyOnNames[] = {"engine_version", "executable"};

// What a notification can be about (docs/operations.md, "Notifications").
inline constexpr std::string_view kNotifyEvents[] = {
    "run_succeeded",  "run_failed",     "run_cancelled", "stage_failed",
    "stage_stalled",  "service_lost",   "agent_lost",    "gpu_fault",
    "stage_gpu_idle", "budget_warning", "budget_reached"};

// Where notifications go and which: the workflow's `notify:` block, and longhauld's
// --notify-* flags in the same shape.
struct NotifySpec {
  std::vector<std::string> on;        // event kinds (kNotifyEvents); empty: every kind
  std::vector<std::string> webhooks;  // http:// or https:// URLs, each sent a POST
  std::string format = "json";        // of the webhooks' body: "json" (the event) or "slack"
  std::vector<std::string> command;   // argv run with the event's JSON on stdin; empty: none
  bool empty() const { return webhooks.empty() && command.empty(); }
  // True when `kind` is one this spec sends.
  bool Wants(std::string_view kind) const {
    if (on.empty()) return true;
    for (const std::string& k : on) {
      if (k == kind) return true;
    }
    return false;
  }
};

// Checks a NotifySpec built from flags or a file: known kinds, http(s):// URLs, a known
// format. `where` names it in the message ("--notify-webhook", "notify in wf.yaml").
Status CheckNotifySpec(const NotifySpec& spec, std::string_view where);

// The workflow's `retention:` block: how long longhauld keeps what this workflow's ended runs
// left (docs/operations.md, "Retention"), instead of its --retention-age / --retention-keep.
// A field not given leaves the daemon's value; 0 turns that rule off for this workflow.
struct RetentionSpec {
  std::optional<int64_t> age_ms;  // collect runs that ended longer ago than this
  std::optional<int> keep;        // collect runs beyond the newest `keep`
  bool empty() const { return !age_ms && !keep; }
};

struct ParamSpec {
  std::string name;
  std::string default_value;  // YAML scalar as written ("8", "true", "/models/x")
  SourcePos pos;
};

// A `${tags.TAG.outputs.NAME}` or `${tags.TAG.run}` in a stage's template. Tags live in the
// store, which this library does not know: the submission resolves each use (scheduler's
// tag_resolve.h) and names this position when the tag or output is unknown.
struct TagUse {
  std::string stage;   // the stage whose template holds it
  std::string tag;     // the tag's name
  std::string output;  // the output it reads; "" for ${tags.TAG.run}
  std::string key;     // TagRefKey: "TAG.outputs.NAME" or "TAG.run"
  std::string where;   // "run[1] in stage 'bench'", for messages
  SourcePos pos;       // of its "${"
};

struct Workflow {
  std::string name;
  std::string description;
  std::string path;               // as given to ParseWorkflow, for messages
  std::vector<ParamSpec> params;  // in file order
  std::vector<StageSpec> stages;  // topological order, ties broken by file order
  NotifySpec notify;              // the `notify:` block; empty when there is none
  RetentionSpec retention;        // the `retention:` block; empty when there is none
  std::string priority;           // `priority:` (kPriorityClasses); "" when not given
  BudgetSpec budget;              // `budget:`; empty when there is none
  std::vector<TagUse> tag_uses;   // in file order; empty when no template names a tag

  // nullptr when there is no such stage / param.
  const StageSpec* FindStage(std::string_view name) const;
  const ParamSpec* FindParam(std::string_view name) const;
};

// Parses and validates a workflow file. On error returns InvalidArgument whose message holds
// every problem found, one per line, each "PATH:LINE:COL: what was wrong and what was
// expected" (e.g. "eagle.yaml:12:5: unknown key 'neds' in stage 'datagen' (did you mean
// 'needs'?)", "eagle.yaml:8:3: cycle: a -> b -> c -> a").
Result<Workflow> ParseWorkflow(std::string_view text, std::string_view path);

// Applies `--set` overrides to the workflow's defaults. Unknown names are an error that names
// them. Returns every param's value.
Result<std::map<std::string, std::string>> ResolveParams(
    const Workflow& wf, const std::map<std::string, std::string>& overrides);

}  // namespace longhaul::workflow

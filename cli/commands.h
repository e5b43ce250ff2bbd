// The CLI's commands. Each writes its results to ctx.out(), its problems to ctx.err(), and
// returns the process exit code (cli/exit_codes.h). Commands that talk to the coordinator
// need ctx.coordinator set.
#pragma once

#include <google/protobuf/message.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli_env.h"

namespace CLI {
class App;
}  // namespace CLI

namespace longhaul::cli {

struct SubmitOptions {
  std::string file;
  std::vector<std::string> sets;  // "name=value"
  bool watch = false;
  bool no_cache = false;
  bool dry_run = false;
  bool all = false;      // a dry run prints every plan entry, not the first 50
  std::string priority;  // high, normal or low; "" the workflow's
  double budget = 0;     // GPU-hours; 0 the workflow's
  bool budget_hard = false;
};
// Validates locally first (exit 2 and nothing sent on any problem), then SubmitRun.
int Submit(CommandContext& ctx, const SubmitOptions& options);
struct PivotOptions {
  int64_t run_id = 0;
  std::vector<std::string> sets;  // "name=value", on top of the earlier run's own
  std::string from_stage;
  bool watch = false;
  bool no_cache = false;
  bool dry_run = false;
  bool all = false;  // print every plan entry, not the first 50
};
// Resubmits RUN's workflow with changes; prints the plan (every stage reused or re-run, and
// why) and the new run's id.
int Pivot(CommandContext& ctx, const PivotOptions& options);
// Local only: the stages in topological order, or the errors (exit 2).
int Validate(CommandContext& ctx, const std::string& file);

struct RunsOptions {
  std::string status;    // a run status name, or empty
  std::string workflow;  // or empty
  int limit = 50;
  std::string tag;  // `--tag NAME`: only the run that tag names, or empty
};
int ListRuns(CommandContext& ctx, const RunsOptions& options);
struct ShowOptions {
  int64_t run_id = 0;
  std::string stage;      // empty: the whole run
  bool attempts = false;  // also every attempt
  bool why = false;       // with a stage: its plan and what went into its cache key
  bool all = false;       // every stage of a big run, fetched page by page
  bool watch = false;     // print again every `interval` while it changes, until the run ends
  std::string interval = "2s";
  std::string sweep;  // `--sweep STAGE`: that foreach stage's items as one table
  std::string sort;   // with sweep: the column to sort by (item, status, final, best, ...)
};
// The run (header, stages, descriptions, plan, outputs, metrics, artifacts), or with a stage
// only that stage; NOT_FOUND for an unknown stage. A run of more than kSmallRunStages stages
// is summarised (counts per state, then the stages running, failed and most recently changed,
// at most kSummaryStages each) unless options.all. With options.watch, polls every
// options.interval, prints the run again whenever that output changed (on a terminal, over
// the previous one) and, once the run has ended, returns its exit code (ExitCodeForRun).
int ShowRun(CommandContext& ctx, const ShowOptions& options);
// `show RUN --sweep STAGE [--sort KEY]`: the items of foreach stage STAGE, read from the
// workflow file the run was submitted with, one row each: its values, status, the final and
// best value of the metric its early_stop judges (else the first it reports), the largest step
// reported, wall time and GPU-hours (sweep_view.cc).
int ShowSweep(CommandContext& ctx, const ShowOptions& options);

struct CompareOptions {
  int64_t a = 0;
  int64_t b = 0;
  std::vector<std::string> metrics;  // "stage.metric", "metric" or "stage"; empty: all
  bool all_params = false;           // every param, not only those that differ
};
// Two runs side by side: params that differ, what each stage did (ran, reused from which
// run), their metrics with the ratio B/A, and what their GPUs did (compare_gpus.h).
int CompareRuns(CommandContext& ctx, const CompareOptions& options);

struct LineageOptions {
  int64_t run_id = 0;
  std::string stage;
};
// Where a stage's result came from (the attempt that made it, here or in the run it was reused
// from; the stages it needed and where theirs came from) and which stages used it (in this run,
// and later runs of the workflow that reused it). commands_lineage.cc.
int StageLineage(CommandContext& ctx, const LineageOptions& options);
int CancelRun(CommandContext& ctx, int64_t run_id);
int RetryRun(CommandContext& ctx, int64_t run_id, const std::string& stage);

int ListAgents(CommandContext& ctx);
// gpu drain|undrain AGENT[:GPU] (admin): GPUs out of service by hand, or back (docs/gpus.md).
int DrainGpu(CommandContext& ctx, const std::string& target, const std::string& reason,
             bool undrain);
// agent drain|undrain AGENT (admin; commands_maintenance.cc): a maintenance window from `at`
// (ParseDrainAt) on, or none.
int DrainAgent(CommandContext& ctx, const std::string& agent_id, const std::string& at,
               const std::string& reason, bool undrain);
// `--at`: "" (now), "+2h" (a duration from `now_ms`) or an RFC 3339 time; milliseconds. `flag`
// names the option in errors.
Result<int64_t> ParseDrainAt(const std::string& text, int64_t now_ms,
                             std::string_view flag = "--at");
// "agent n1 drains at 2026-12-05 14:00:00 UTC (in 2h): kernel upgrade (by alice)".
std::string DescribeDrain(const std::string& agent_id, const v1::AgentDrain& d, int64_t now_ms);
// Sets run `run_id`'s GPU-hour budget (admin, audited) and prints where it stands.
int SetBudget(CommandContext& ctx, int64_t run_id, double gpu_hours);
// `longhaul priority RUN CLASS`: changes the run's class (audited) and says so.
int SetPriority(CommandContext& ctx, int64_t run_id, const std::string& priority);

// tag RUN STAGE NAME [--force] | tag --rm NAME: names a stage's result (operator, audited;
// docs/workflow-format.md, "Tags"). `args` as given: three, or one with `remove`.
int TagCommand(CommandContext& ctx, const std::vector<std::string>& args, bool force, bool remove);
// tags [--run RUN]: the tags, by name.
int ListTags(CommandContext& ctx, int64_t run_id);
// "best-drafter (train), baseline (prep)": the tags on a run's stages.
std::string TagsOnRunText(const v1::Run& run);
// "tags.best-drafter -> run 41 train", one a tag: where a run's tag references came from.
std::vector<std::string> TagUseLines(const google::protobuf::RepeatedPtrField<v1::TagUse>& uses);

// `longhaul budget --team NAME|--workflow NAME --gpu-hours N [--period 30d] [--hard]` (admin,
// audited) and `longhaul budgets`: GPU-hour budgets across runs (commands_budgets.cc).
struct ScopeBudgetOptions {
  std::string team;
  std::string workflow;
  double gpu_hours = 0;
  std::string period;  // "": the budget's current period, 30d for a new one
  bool hard = false;
};
int SetScopeBudget(CommandContext& ctx, const ScopeBudgetOptions& options);
int ListBudgets(CommandContext& ctx);
// `longhaul budget --team|--workflow NAME --rm` (admin, audited): the runs it paused continue
// (commands_quotas.cc).
int RemoveScopeBudget(CommandContext& ctx, const ScopeBudgetOptions& options);

// `longhaul quota --team T [--gpus N] [--borrow M] [--gpu-hours H --period D] | --rm` (admin,
// audited) and `longhaul quotas`: quotas at run time (commands_quotas.cc). AddQuotaCommands
// adds both to `app`, setting `action` when one is chosen.
struct QuotaOptions {
  std::string team;
  std::optional<int32_t> gpus;
  std::optional<int32_t> borrow;
  std::optional<double> gpu_hours;
  std::string period;
  bool remove = false;
};
int SetQuota(CommandContext& ctx, const QuotaOptions& options);
int ListQuotas(CommandContext& ctx);
// The table of `longhaul quotas` and its fair-share line.
void RenderQuotas(const v1::ListQuotasResponse& resp, std::ostream& out);
void AddQuotaCommands(CLI::App& app, std::function<int(CommandContext&)>& action);

// `longhaul reserve AGENT --gpus N|all --team T|--user U [--from TIME] --until TIME --reason R`
// (admin, audited), `longhaul reservations [--all]`, `longhaul unreserve ID --reason R`:
// agents' GPUs held for a user or team (commands_reservations.cc; docs/scheduling.md,
// "Reservations"). TIME as `agent drain --at` takes it (ParseDrainAt).
struct ReserveOptions {
  std::string agent;
  std::string gpus;  // a count or "all"
  std::string team;
  std::string user;
  std::string from;  // "": now
  std::string until;
  std::string reason;
};
int Reserve(CommandContext& ctx, const ReserveOptions& options);
int Unreserve(CommandContext& ctx, int64_t id, const std::string& reason);
int ListReservations(CommandContext& ctx, bool all);
// "reservation 3: 4 of n1's GPUs for team vision, 2026-12-05 14:00 UTC - 18:00 UTC: training
// sprint (by alice)".
std::string DescribeReservation(const v1::Reservation& r);

struct AuditOptions {
  int limit = 50;
  int64_t before_id = 0;  // 0: from the newest
};
// The audit trail, newest first (admin).
int ListAudit(CommandContext& ctx, const AuditOptions& options);

struct GcOptions {
  bool dry_run = false;
  std::string older_than;  // a duration; "" = longhauld's policy
  int keep_last = 0;       // 0 = longhauld's policy
  std::string workflow;
  std::vector<int64_t> runs;
};
// Retention (admin): removes ended runs' logs, outputs and events, keeps their summaries.
int CollectGarbage(CommandContext& ctx, const GcOptions& options);

struct NotifyListOptions {
  int64_t run_id = 0;  // 0: every notification
  int limit = 50;
  int64_t before_id = 0;
};
// Notifications and how their delivery went, newest first.
int NotifyList(CommandContext& ctx, const NotifyListOptions& options);
struct NotifyTestOptions {
  std::vector<std::string> webhooks;
  std::string format;
  std::vector<std::string> command;
};
// Sends a sample through longhauld (its own sinks, or those given); exit 0 when every sink
// took it.
int NotifyTest(CommandContext& ctx, const NotifyTestOptions& options);

// admin backup: longhauld copies its database to `path` on its own host and checks the copy.
int Backup(CommandContext& ctx, const std::string& path);

struct LogsOptions {
  int64_t run_id = 0;
  std::string stage;
  int attempt = 0;  // 0: the latest
  bool stderr_stream = false;
  bool follow = false;
  int64_t tail_bytes = 0;  // 0: from the start
  std::string grep;        // when set: only the lines this regular expression finds
  // The bytes as they are even on a terminal; otherwise a terminal gets control characters
  // and invalid UTF-8 escaped (terminal_text.h), newlines and tabs kept. A pipe always gets
  // the bytes.
  bool raw = false;
  int64_t poll_ms = 200;
};
int Logs(CommandContext& ctx, const LogsOptions& options);

struct TokenOptions {
  std::string role;  // viewer, operator or admin
  std::string name;  // who holds it
  std::string out;   // token new: the file the token goes to (created 0600, never overwritten)
  std::string team;  // the line's TEAM column ("" for none)
};
// A new random token into options.out; its tokens-file line on stdout.
int TokenNew(CommandContext& ctx, const TokenOptions& options);
// The tokens-file line for the token on the first line of stdin.
int TokenHash(CommandContext& ctx, const TokenOptions& options);

// Follows the run until it ends; exit code from its result (0, 1 or 5). `interval`: piped,
// the least time between two lines of one stage that only tell new progress or a new message
// (a duration such as 10s; state changes are printed at once, --json prints every update).
int Watch(CommandContext& ctx, int64_t run_id, const std::string& interval = "10s");

// `message` as one line of protobuf JSON (field names as in the .proto) on ctx.out().
int PrintJson(CommandContext& ctx, const google::protobuf::Message& message);

}  // namespace longhaul::cli

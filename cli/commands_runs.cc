// runs, show, cancel, retry: reading and steering runs.
#include <google/protobuf/util/json_util.h>

#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/provenance_view.h"
#include "cli/run_view.h"
#include "cli/show_summary.h"
#include "cli/source_state.h"
#include "cli/stage_view.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/duration.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

// "running (paused: budget)" for a run that goes on but starts nothing new while its own
// budget, or a team's or workflow's, is reached; else the status's name.
std::string RunStatusText(const v1::Run& run) {
  std::string status(RunStatusName(run.status()));
  bool paused = !run.budget_hold().empty() || (run.has_budget() && run.budget().reached());
  if (paused && !IsTerminal(run.status())) status += " (paused: budget)";
  return status;
}

// "failed: stage 'left' failed"; the status alone when the reason only repeats it (a cancel's
// reason is "cancelled": "cancelled: cancelled" said it twice).
std::string RunStatusWithReason(const v1::Run& run) {
  std::string status = RunStatusText(run);
  if (run.reason().empty() || run.reason() == status) return status;
  return StrCat(status, ": ", TerminalSafe(run.reason()));
}

std::string AllRunStatusNames() {
  std::vector<std::string> names;
  for (auto s :
       {v1::RUN_PENDING, v1::RUN_RUNNING, v1::RUN_SUCCEEDED, v1::RUN_FAILED, v1::RUN_CANCELLED}) {
    names.push_back(std::string(RunStatusName(s)));
  }
  return StrJoin(names, ", ");
}

// Wall time summed over the run's own stage attempts (reused stages count 0).
double StageSeconds(const v1::Run& run) {
  double total = 0;
  for (const v1::Stage& s : run.stages()) total += s.wall_seconds();
  return total;
}

// A run retention collected: when, and which stages' files went and which stayed, and why.
void PrintCollected(std::ostream& out, const v1::Run& run) {
  out << "  collected: " << FormatLocalTime(run.collected_at_ms())
      << " by retention: its logs, outputs and events are removed; its summary stays\n";
  std::vector<std::string> removed, kept;
  for (const v1::Stage& s : run.stages()) {
    if (s.result_removed()) removed.push_back(s.name());
    if (!s.result_kept().empty()) kept.push_back(StrCat(s.name(), " (", s.result_kept(), ")"));
  }
  if (!removed.empty()) {
    out << "  removed:   the results of " << TerminalSafe(StrJoin(removed, ", ")) << '\n';
  }
  if (!kept.empty()) out << "  kept:      " << TerminalSafe(StrJoin(kept, ", ")) << '\n';
}

// "ada (team vision), class high"; "-" for a run from before submitters were recorded.
std::string SubmitterLine(const v1::Run& run) {
  std::string who = run.user().empty() ? "-" : run.user();
  if (!run.team().empty()) who += StrCat(" (team ", run.team(), ")");
  return StrCat(who, ", class ", run.priority().empty() ? "normal" : run.priority());
}

// "10 GPU-h, 8.2 used (82 %)", with "; reached: paused until raised" and who last set it.
std::string BudgetLine(const v1::RunBudget& b) {
  std::string line = StrCat(FormatBudgetHours(b.gpu_hours()), " GPU-h", b.hard() ? " (hard)" : "",
                            ", ", FormatBudgetHours(b.used_gpu_hours()), " used");
  if (b.gpu_hours() > 0) {
    line += StrCat(" (", static_cast<int>(b.used_gpu_hours() * 100 / b.gpu_hours()), " %)");
  }
  if (b.reached()) line += "; reached: no new attempts until an admin raises it";
  if (!b.raised_by().empty()) line += StrCat("; set by ", b.raised_by());
  return line;
}

void PrintRunHeader(CommandContext& ctx, const v1::Run& run) {
  std::ostream& out = ctx.out();
  out << "run " << run.id() << '\n';
  out << "  workflow:  " << TerminalSafe(run.workflow_name());
  if (!run.workflow_path().empty()) out << " (" << TerminalSafe(run.workflow_path()) << ")";
  out << '\n';
  if (!run.description().empty()) out << "  about:     " << TerminalSafe(run.description()) << '\n';
  out << "  status:    " << RunStatusWithReason(run);
  out << "  (" << StageCountsSummary(run) << ")\n";
  out << "  params:    " << TerminalSafe(ParamsText(run.params())) << '\n';
  if (!run.tags().empty()) out << "  tags:      " << TerminalSafe(TagsOnRunText(run)) << '\n';
  for (const std::string& line : TagUseLines(run.tag_uses())) {
    out << "  from tag:  " << TerminalSafe(line) << '\n';
  }
  out << "  created:   " << FormatLocalTime(run.created_at_ms()) << '\n';
  out << "  started:   " << FormatLocalTime(run.started_at_ms()) << '\n';
  out << "  ended:     " << FormatLocalTime(run.ended_at_ms());
  int64_t elapsed = RunElapsedMs(run, ctx.NowMs());
  if (elapsed >= 0)
    out << "  (" << (run.ended_at_ms() > 0 ? "took " : "running for ") << FormatDuration(elapsed)
        << ")";
  out << '\n';
  if (run.parent_run_id() > 0) out << "  parent:    run " << run.parent_run_id() << '\n';
  out << "  source:    " << TerminalSafe(SourceStateLine(run.source())) << '\n';
  if (run.collected_at_ms() > 0) PrintCollected(out, run);
  if (run.no_cache()) out << "  cache:     off (--no-cache)\n";
  out << "  submitter: " << TerminalSafe(SubmitterLine(run)) << '\n';
  if (run.has_budget()) out << "  budget:    " << TerminalSafe(BudgetLine(run.budget())) << '\n';
  if (!run.budget_hold().empty()) {  // a team's or workflow's budget pauses it
    out << "  budget:    " << TerminalSafe(run.budget_hold())
        << ": no new attempts until an admin raises it or its period ends\n";
  }
  // Beside a budget line, the same figure with the same precision (0.00503, not 0.01).
  out << "  gpu-hours: "
      << (run.has_budget() ? FormatBudgetHours(run.gpu_hours()) : FormatGpuHours(run.gpu_hours()));
  // Stage time sums what is shown: not said for a run shown in part.
  if (run.next_stage_page_token().empty()) {
    out << "  (stage time " << FormatDuration(static_cast<int64_t>(StageSeconds(run) * 1000))
        << ")";
  }
  out << '\n';
  if (run.has_gpu_usage()) out << "  gpu use:   " << GpuUsageText(run.gpu_usage()) << '\n';
  if (run.has_early_stop_saving()) {
    out << "  stopping:  " << EarlyStopSavingText(run.early_stop_saving()) << '\n';
  }
}

// The stages whose GPUs were sampled: what they did (docs/gpus.md, "Telemetry per attempt").
void PrintGpuUsage(CommandContext& ctx, const v1::Run& run) {
  Table table({"STAGE", "GPU-H SAMPLED", "MEAN SM", "PEAK MEMORY", "ENERGY", "IDLE GPU-H"});
  bool any = false;
  for (const v1::Stage& s : run.stages()) {
    if (!s.has_gpu_usage()) continue;
    any = true;
    const v1::GpuUsage& u = s.gpu_usage();
    table.AddRow({s.name(), FormatGpuHours(u.sampled_gpu_hours()),
                  u.mean_sm_util_pct() < 0 ? "-" : StrCat(FormatNumber(u.mean_sm_util_pct()), "%"),
                  u.peak_mem_used_bytes() < 0 ? "-" : FormatBytes(u.peak_mem_used_bytes()),
                  FormatEnergy(u.energy_kwh()), FormatGpuHours(u.idle_gpu_hours())});
  }
  if (!any) return;
  ctx.out() << "\nGPUs\n";
  table.Render(ctx.out());
}

void PrintStageTable(CommandContext& ctx, const v1::Run& run) {
  ctx.out() << '\n';
  RenderStageTable(ctx.out(), run.stages(), ctx.NowMs());
}

// What the workflow file says each stage is for.
void PrintDescriptions(CommandContext& ctx, const v1::Run& run) {
  Table table({"STAGE", "DESCRIPTION"});
  for (const v1::Stage& s : run.stages()) {
    if (!s.description().empty()) table.AddRow({s.name(), s.description()});
  }
  if (table.rows() == 0) return;
  ctx.out() << "\ndescriptions:\n";
  table.Render(ctx.out());
}

// Stages whose last message is a warning (a GPU's memory near its limit, say), and those whose
// event lines did not parse: the lines are kept, the stage goes on, and this says where to look.
void PrintWarnings(CommandContext& ctx, const v1::Run& run) {
  bool any = false;
  auto say = [&](const v1::Stage& s, const std::string& text) {
    if (!any) ctx.out() << "\nwarnings:\n";
    any = true;
    ctx.out() << "  " << TerminalSafe(s.name()) << ": " << TerminalSafe(text) << '\n';
  };
  for (const v1::Stage& s : run.stages()) {
    if (s.last_message_level() == "warn" && !s.last_message().empty()) say(s, s.last_message());
    if (s.malformed_events() > 0) say(s, MalformedWarning(s));
  }
}

// Why each stage ran or was reused, decided at submission: the story of a pivot.
void PrintPlanReasons(CommandContext& ctx, const v1::Run& run) {
  bool any_reuse = false;
  for (const v1::Stage& s : run.stages()) any_reuse |= s.plan_action() == "reuse";
  if (!any_reuse && run.parent_run_id() == 0) return;
  Table table({"STAGE", "PLAN", "WHY"});
  for (const v1::Stage& s : run.stages()) {
    if (s.plan_action().empty()) continue;
    table.AddRow({s.name(), s.plan_action(), s.plan_reason().empty() ? "-" : s.plan_reason()});
  }
  if (table.rows() == 0) return;
  ctx.out() << "\nplan:\n";
  table.Render(ctx.out());
}

void PrintOutputsMetricsArtifacts(CommandContext& ctx, const v1::Run& run) {
  Table outputs({"STAGE", "OUTPUT", "VALUE"});
  Table metrics({"STAGE", "METRIC", "VALUE", "STEP", "ATTEMPT"});
  Table artifacts({"STAGE", "ARTIFACT", "SIZE", "AGENT", "PATH"});
  metrics.AlignRight(2);
  metrics.AlignRight(3);
  artifacts.AlignRight(2);
  for (const v1::Stage& s : run.stages()) {
    std::map<std::string, std::string> sorted(s.outputs().begin(), s.outputs().end());
    for (const auto& [k, v] : sorted) outputs.AddRow({s.name(), k, v});
    for (const v1::Metric& m : s.metrics()) {
      char value[32];
      std::snprintf(value, sizeof value, "%.6g", m.value());
      metrics.AddRow({s.name(), m.name(), value, std::to_string(m.step()),
                      m.attempt() > 0 ? std::to_string(m.attempt()) : "-"});
    }
    for (const v1::Artifact& a : s.artifacts()) {
      // Retention removed the file; the record stays, saying so.
      artifacts.AddRow({s.name(), a.name(), FormatBytes(a.bytes()),
                        a.agent_id().empty() ? "-" : a.agent_id(),
                        s.result_removed() ? StrCat("(removed) ", a.path()) : a.path()});
    }
  }
  for (auto [title, table] : {std::pair{"outputs", &outputs}, std::pair{"metrics", &metrics},
                              std::pair{"artifacts", &artifacts}}) {
    if (table->rows() == 0) continue;
    ctx.out() << '\n' << title << ":\n";
    table->Render(ctx.out());
  }
}

void PrintAttempts(CommandContext& ctx, const v1::Run& run) {
  Table table({"STAGE", "ATTEMPT", "AGENT", "STATE", "REASON", "STARTED", "ENDED", "EXIT"});
  table.AlignRight(1);
  table.AlignRight(7);
  for (const v1::Stage& s : run.stages()) {
    for (const v1::Attempt& a : s.attempts()) {
      std::string exit = "-";
      if (a.state() == v1::ATTEMPT_EXITED) exit = std::to_string(a.exit_code());
      if (a.signal() > 0) exit = StrCat("signal ", a.signal());
      std::string reason = a.reason();
      if (a.borrowed()) {
        reason =
            reason.empty() ? "borrowed from the pool" : StrCat(reason, " (borrowed from the pool)");
      }
      table.AddRow({s.name(), std::to_string(a.number()), a.agent_id().empty() ? "-" : a.agent_id(),
                    std::string(AttemptStateName(a.state())), reason.empty() ? "-" : reason,
                    FormatLocalTime(a.started_at_ms()), FormatLocalTime(a.ended_at_ms()), exit});
    }
  }
  ctx.out() << "\nattempts:\n";
  table.Render(ctx.out());
}

// cancel and retry print the run's status after the change.
int PrintRunStatus(CommandContext& ctx, const v1::Run& run) {
  if (ctx.json) return PrintJson(ctx, run);
  ctx.out() << "run " << run.id() << ": " << RunStatusWithReason(run);
  ctx.out() << "  (" << StageCountsSummary(run) << ")\n";
  return kExitOk;
}

}  // namespace

int PrintJson(CommandContext& ctx, const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return ctx.Fail(absl::InternalError(StrCat("cannot print JSON: ", status.ToString())));
  }
  ctx.out() << json << '\n';
  ctx.out().flush();
  return kExitOk;
}

int ListRuns(CommandContext& ctx, const RunsOptions& options) {
  if (!options.status.empty() && !ParseRunStatus(options.status)) {
    return ctx.Fail(absl::InvalidArgumentError(
        StrCat("--status '", options.status, "': expected one of ", AllRunStatusNames())));
  }
  if (options.limit <= 0) {
    return ctx.Fail(absl::InvalidArgumentError("--limit: expected a number > 0"));
  }
  v1::ListRunsRequest req;
  req.set_status(options.status);
  req.set_workflow(options.workflow);
  req.set_limit(options.limit);
  if (!options.tag.empty()) {
    Result<v1::ListTagsResponse> tags = ctx.coordinator->ListTags(v1::ListTagsRequest());
    if (!tags.ok()) return ctx.Fail(tags.status());
    for (const v1::Tag& t : tags->tags()) {
      if (t.name() == options.tag) req.set_id(t.run_id());
    }
    if (req.id() == 0) {
      return ctx.Fail(absl::NotFoundError(StrCat("--tag: no tag '", options.tag, "'")));
    }
  }
  Result<v1::ListRunsResponse> resp = ctx.coordinator->ListRuns(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  Table table(
      {"ID", "WORKFLOW", "STATUS", "STAGES", "CREATED", "DURATION", "PARENT", "USER", "CLASS"});
  table.AlignRight(0);
  table.AlignRight(5);
  int64_t now = ctx.NowMs();
  for (const v1::Run& r : resp->runs()) {
    int64_t elapsed = RunElapsedMs(r, now);
    table.AddRow(
        {std::to_string(r.id()), r.workflow_name(), RunStatusText(r), StageCountsSummary(r),
         FormatLocalTime(r.created_at_ms()), elapsed >= 0 ? FormatDuration(elapsed) : "-",
         r.parent_run_id() > 0 ? std::to_string(r.parent_run_id()) : "-",
         r.user().empty() ? "-" : r.user(), r.priority().empty() ? "normal" : r.priority()});
  }
  if (table.rows() == 0) {
    ctx.err() << "no runs\n";
    return kExitOk;
  }
  table.Render(ctx.out());
  if (!resp->next_page_token().empty()) {
    ctx.err() << "(more runs: raise --limit or filter with --status/--workflow)\n";
  }
  return kExitOk;
}

namespace {

// `show RUN STAGE`: the stage's header, with --why what decided it, then its outputs,
// metrics, artifacts (and attempts) as `show RUN` prints them.
int ShowStage(CommandContext& ctx, v1::Run run, const ShowOptions& options) {
  Result<v1::Stage> found =
      FindStage(*ctx.coordinator, run, options.stage, options.attempts || !ctx.json);
  if (!found.ok()) return ctx.Fail(found.status());
  v1::Stage stage = *std::move(found);
  if (ctx.json) return PrintJson(ctx, stage);
  ctx.out() << StageHeaderText(run, stage, ctx.NowMs(), /*with_plan=*/!options.why);
  if (options.why) ctx.out() << '\n' << WhyText(stage);
  run.clear_stages();
  *run.add_stages() = std::move(stage);
  if (run.stages(0).has_gpu_usage()) {
    ctx.out() << "  gpu use:   " << GpuUsageText(run.stages(0).gpu_usage()) << '\n';
  }
  PrintOutputsMetricsArtifacts(ctx, run);
  RenderEnvironmentTable(ctx.out(), run);
  if (options.attempts) PrintAttempts(ctx, run);
  return kExitOk;
}

}  // namespace

namespace {

// One GetRun of what `show` prints: the run with its first page of stages (all of them with
// options.all).
Result<v1::Run> FetchShownRun(CommandContext& ctx, const ShowOptions& options) {
  v1::GetRunRequest req;
  req.set_id(options.run_id);
  // Attempts for their environments too (the table, not --json unless asked), on the first
  // page: at most kSmallRunStages stages unless --all.
  req.set_include_attempts(options.attempts || !ctx.json);
  // A small run comes whole in the first page; a bigger one is summarised, or paged in.
  if (options.stage.empty() && !options.all) req.set_stage_limit(kSmallRunStages);
  Result<v1::Run> run = ctx.coordinator->GetRun(req);
  if (!run.ok() || !options.all) return run;
  RETURN_IF_ERROR(FetchRemainingStages(*ctx.coordinator, &*run, options.attempts));
  return run;
}

int PrintShownRun(CommandContext& ctx, v1::Run run, const ShowOptions& options) {
  if (!options.stage.empty()) return ShowStage(ctx, std::move(run), options);
  bool summary = !options.all && !run.next_stage_page_token().empty();
  if (ctx.json) return PrintJson(ctx, run);
  PrintRunHeader(ctx, run);
  if (summary) {
    Status s = PrintRunSummary(ctx, run);
    return s.ok() ? kExitOk : ctx.Fail(s);
  }
  PrintStageTable(ctx, run);
  PrintGpuUsage(ctx, run);
  PrintDescriptions(ctx, run);
  PrintWarnings(ctx, run);
  PrintPlanReasons(ctx, run);
  PrintOutputsMetricsArtifacts(ctx, run);
  RenderEnvironmentTable(ctx.out(), run);
  if (options.attempts) PrintAttempts(ctx, run);
  return kExitOk;
}

constexpr int64_t kShowWatchGiveUpMs = 5 * 60'000;

// show --watch: polls, and prints the run again whenever what `show` prints changed (on a
// terminal, over the previous one), until the run ends. A coordinator away for less than
// kShowWatchGiveUpMs (a restart) only delays the next frame.
int ShowRunWatch(CommandContext& ctx, const ShowOptions& options) {
  auto interval_ms = ParseDurationMs(options.interval);
  if (!interval_ms.ok() || *interval_ms <= 0) {
    return ctx.Fail(absl::InvalidArgumentError(
        StrCat("--interval '", options.interval, "': expected a duration such as 2s")));
  }
  bool terminal = ctx.env.stdout_is_tty && !ctx.json;
  std::string last;
  bool seen = false;
  int64_t failing_since = 0;
  for (;; ctx.env.sleep_ms(*interval_ms)) {
    Result<v1::Run> run = FetchShownRun(ctx, options);
    if (!run.ok()) {
      bool transient = run.status().code() == absl::StatusCode::kUnavailable ||
                       run.status().code() == absl::StatusCode::kDeadlineExceeded;
      if (!seen || !transient) return ctx.Fail(run.status());
      if (failing_since == 0) {
        failing_since = ctx.NowMs();
        ctx.err() << "longhaul: cannot reach the coordinator (" << ToStd(run.status().message())
                  << "); trying again every " << options.interval << "\n";
      } else if (ctx.NowMs() - failing_since > kShowWatchGiveUpMs) {
        return ctx.Fail(run.status());
      }
      continue;
    }
    seen = true;
    failing_since = 0;
    v1::RunStatus status = run->status();
    std::ostringstream frame;
    std::ostream* out = ctx.env.out;
    ctx.env.out = &frame;
    int code = PrintShownRun(ctx, *std::move(run), options);
    ctx.env.out = out;
    if (code != kExitOk) return code;
    if (frame.str() != last) {
      if (terminal) {
        ctx.out() << "\x1b[H\x1b[2J";  // home, clear screen
      } else if (!last.empty()) {
        ctx.out() << "\n";
      }
      last = frame.str();
      ctx.out() << last << std::flush;
    }
    if (IsTerminal(status)) return ExitCodeForRun(status);
  }
}

}  // namespace

int ShowRun(CommandContext& ctx, const ShowOptions& options) {
  if (options.why && options.stage.empty()) {
    return ctx.Fail(
        absl::InvalidArgumentError("--why explains one stage: longhaul show RUN STAGE --why"));
  }
  if (!options.sort.empty() && options.sweep.empty()) {
    return ctx.Fail(absl::InvalidArgumentError(
        "--sort orders a sweep's table: longhaul show RUN --sweep STAGE --sort KEY"));
  }
  if (!options.sweep.empty()) {
    if (!options.stage.empty() || options.watch || options.why) {
      return ctx.Fail(absl::InvalidArgumentError(
          "--sweep shows a sweep's items alone: longhaul show RUN --sweep STAGE [--sort KEY]"));
    }
    return ShowSweep(ctx, options);
  }
  if (options.watch) return ShowRunWatch(ctx, options);
  Result<v1::Run> run = FetchShownRun(ctx, options);
  if (!run.ok()) return ctx.Fail(run.status());
  return PrintShownRun(ctx, *std::move(run), options);
}

int CancelRun(CommandContext& ctx, int64_t run_id) {
  v1::CancelRunRequest req;
  req.set_id(run_id);
  Result<v1::Run> run = ctx.coordinator->CancelRun(req);
  if (!run.ok()) return ctx.Fail(run.status());
  return PrintRunStatus(ctx, *run);
}

int RetryRun(CommandContext& ctx, int64_t run_id, const std::string& stage) {
  v1::RetryStageRequest req;
  req.set_run_id(run_id);
  req.set_stage(stage);
  Result<v1::Run> run = ctx.coordinator->RetryStage(req);
  if (!run.ok()) return ctx.Fail(run.status());
  return PrintRunStatus(ctx, *run);
}

}  // namespace longhaul::cli

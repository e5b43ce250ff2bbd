// submit and validate: the commands that read a workflow file.
#include <cstdio>
#include <filesystem>
#include <random>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/source_state.h"
#include "cli/table.h"
#include "core/fs.h"
#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::cli {
namespace {

// The widest NEEDS cell `validate` prints: a stage that needs hundreds is cut, not every row
// padded to its list.
constexpr int kValidateNeedsWidth = 40;

struct LoadedWorkflow {
  std::string text;
  workflow::Workflow wf;
};

// Reads and validates `file`, printing every problem; nullopt after printing.
std::optional<LoadedWorkflow> LoadWorkflow(CommandContext& ctx, const std::string& file) {
  Result<std::string> text = ReadFile(file);
  if (!text.ok()) {
    ctx.err() << "longhaul: cannot read the workflow file: " << ToStd(text.status().message())
              << '\n';
    return std::nullopt;
  }
  Result<workflow::Workflow> wf = workflow::ParseWorkflow(*text, file);
  if (!wf.ok()) {
    // Already "PATH:LINE:COL: ..." lines, the form editors jump to.
    ctx.err() << ToStd(wf.status().message()) << '\n';
    return std::nullopt;
  }
  return LoadedWorkflow{*std::move(text), *std::move(wf)};
}

Result<std::map<std::string, std::string>> ParseSets(const std::vector<std::string>& sets) {
  std::map<std::string, std::string> out;
  for (const std::string& s : sets) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          StrCat("--set '", s, "': expected NAME=VALUE, e.g. --set spec_engine=sglang"));
    }
    out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}

// "12m30s, 0.42 GPU-h" for a reuse entry; "-" otherwise.
std::string SavedText(const v1::PlanEntry& e) {
  if (e.action() != "reuse") return "-";
  std::string out = FormatDuration(static_cast<int64_t>(e.saved_wall_seconds() * 1000));
  if (e.saved_gpu_hours() > 0) out += StrCat(", ", FormatGpuHours(e.saved_gpu_hours()), " GPU-h");
  return out;
}

// How many plan entries a dry run prints unless --all: the counts cover the rest.
constexpr int kPlanShown = 50;
// Entries per call when --all pages through a big plan (each call plans the whole run again).
constexpr int kPlanPage = 20'000;

// 32 random hex digits: the submission id that lets a retried call find the run the first
// one made (docs/cli.md).
std::string NewSubmissionId() {
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(rd()));
    id += part;
  }
  return id;
}

// Sends `call` again when its answer was lost (the deadline passed, the connection broke),
// up to 3 times. The request carries one submission id throughout, so the coordinator makes
// at most one run however often it is asked.
Result<v1::SubmitRunResponse> CallOnce(
    CommandContext& ctx, const std::function<Result<v1::SubmitRunResponse>()>& call) {
  for (int attempt = 1;; ++attempt) {
    Result<v1::SubmitRunResponse> resp = call();
    absl::StatusCode code = resp.status().code();
    bool lost = code == absl::StatusCode::kDeadlineExceeded ||
                code == absl::StatusCode::kUnavailable;
    if (resp.ok() || !lost || attempt == 3) return resp;
    ctx.err() << "longhaul: " << ToStd(resp.status().message())
              << "; asking again with the same submission id (it makes one run at most)\n";
  }
}

// "plan: 100000 stages: 99990 run, 10 reuse"
std::string PlanCounts(const v1::PlanSummary& s) {
  std::vector<std::string> parts;
  for (const char* action : {"run", "reuse", "skip"}) {
    auto it = s.actions().find(action);
    if (it != s.actions().end() && it->second > 0) parts.push_back(StrCat(it->second, " ", action));
  }
  return StrCat("plan: ", s.stages(), s.stages() == 1 ? " stage" : " stages",
                parts.empty() ? "" : ": ", StrJoin(parts, ", "));
}

int Reused(const v1::PlanSummary& s) {
  auto it = s.actions().find("reuse");
  return it == s.actions().end() ? 0 : it->second;
}

std::string ReasonText(const v1::PlanEntry& e) {
  std::string reason = e.reason();
  if (e.action() == "reuse" && e.reuse_run_id() > 0) {
    std::string from = StrCat("from run ", e.reuse_run_id());
    if (!e.reuse_stage().empty() && e.reuse_stage() != e.stage()) {
      from += StrCat(", stage ", e.reuse_stage());
    }
    reason = reason.empty() ? from : StrCat(reason, " (", from, ")");
  }
  return reason;
}

// The entries of `resp`, then those of every later page `next(offset)` returns when `all`.
// A big plan without --all ends with a line that says how many were left out.
Status PrintPlanTable(CommandContext& ctx, std::ostream& out, const v1::SubmitRunResponse& resp,
                      bool with_saves, bool all,
                      const std::function<Result<v1::SubmitRunResponse>(int)>& next) {
  std::vector<std::string> header = {"STAGE", "ACTION"};
  if (with_saves) header.push_back("SAVES");
  header.push_back("REASON");
  Table table(header);
  auto add = [&](const v1::SubmitRunResponse& page) {
    for (const v1::PlanEntry& e : page.plan()) {
      std::vector<std::string> row = {e.stage(), e.action()};
      if (with_saves) row.push_back(SavedText(e));
      row.push_back(with_saves ? e.reason() : ReasonText(e));
      table.AddRow(row);
    }
  };
  add(resp);
  int shown = resp.plan_summary().offset() + resp.plan_size();
  int total = resp.plan_summary().stages();
  while (all && shown < total && resp.plan_size() > 0) {
    ASSIGN_OR_RETURN(v1::SubmitRunResponse page, next(shown));
    if (page.plan_size() == 0) break;
    add(page);
    shown += page.plan_size();
  }
  table.Render(out);
  if (shown < total) {
    out << "... " << total - shown << " more stages (--all prints every one)\n";
  }
  return OkStatus();
}

// The cost line of the items a changed early_stop rule stops (docs/sweeps.md).
void PrintPlanStopping(std::ostream& out, const v1::PlanSummary& summary) {
  if (!summary.has_early_stop_saving()) return;
  out << "stopping: " << EarlyStopSavingText(summary.early_stop_saving()) << '\n';
}

}  // namespace

int Validate(CommandContext& ctx, const std::string& file) {
  std::optional<LoadedWorkflow> loaded = LoadWorkflow(ctx, file);
  if (!loaded) return kExitUsage;
  const workflow::Workflow* wf = &loaded->wf;
  ctx.out() << file << ": workflow '" << wf->name << "' is valid, " << wf->stages.size()
            << (wf->stages.size() == 1 ? " stage" : " stages") << '\n';
  if (!wf->params.empty()) {
    std::vector<std::string> params;
    for (const auto& p : wf->params) params.push_back(StrCat(p.name, "=", p.default_value));
    ctx.out() << "params: " << StrJoin(params, ", ") << '\n';
  }
  Table table({"STAGE", "KIND", "NEEDS", "RUN"});
  table.LimitWidth(2, kValidateNeedsWidth);
  for (const workflow::StageSpec& s : wf->stages) {
    std::string needs = s.needs.empty() ? "-" : StrJoin(s.needs, ",");
    // Too many to show: how many first, then as many names as fit.
    if (DisplayWidth(needs) > kValidateNeedsWidth) {
      needs = StrCat(s.needs.size(), " stages: ", needs);
    }
    table.AddRow({s.name, s.kind == workflow::StageKind::kService ? "service" : "task", needs,
                  ShellJoin(s.run)});
  }
  table.Render(ctx.out());
  return kExitOk;
}

int Submit(CommandContext& ctx, const SubmitOptions& options) {
  std::optional<LoadedWorkflow> loaded = LoadWorkflow(ctx, options.file);
  if (!loaded) return kExitUsage;
  const workflow::Workflow* wf = &loaded->wf;
  Result<std::map<std::string, std::string>> sets = ParseSets(options.sets);
  if (!sets.ok()) return ctx.Fail(sets.status());
  Result<std::map<std::string, std::string>> params = workflow::ResolveParams(*wf, *sets);
  if (!params.ok()) return ctx.Fail(params.status());

  v1::SubmitRunRequest req;
  req.set_workflow_text(loaded->text);
  // Absolute, so ${workflow.dir} can name files that ship beside the workflow.
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(options.file, ec);
  req.set_workflow_path(ec ? options.file : abs.lexically_normal().string());
  if (!options.dry_run) *req.mutable_source() = ReadSourceState(options.file);
  for (const auto& [k, v] : *sets) (*req.mutable_params())[k] = v;
  req.set_dry_run(options.dry_run);
  req.set_no_cache(options.no_cache);
  req.set_priority(options.priority);
  req.set_budget_gpu_hours(options.budget);
  req.set_budget_hard(options.budget_hard);
  req.set_submission_id(NewSubmissionId());
  // A real submission needs only the plan's counts; a dry run shows entries.
  req.mutable_plan_page()->set_limit(options.dry_run ? (options.all ? kPlanPage : kPlanShown)
                                                     : -1);
  if (ctx.json) req.mutable_plan_page()->set_limit(0);
  Result<v1::SubmitRunResponse> resp =
      CallOnce(ctx, [&] { return ctx.coordinator->SubmitRun(req); });
  if (!resp.ok()) return ctx.Fail(resp.status());

  if (ctx.json) {
    PrintJson(ctx, *resp);
  } else if (options.dry_run) {
    // Counts first when the table will not list every stage.
    if (resp->plan_summary().stages() > resp->plan_size()) {
      ctx.out() << PlanCounts(resp->plan_summary()) << '\n';
    }
    Status printed = PrintPlanTable(ctx, ctx.out(), *resp, /*with_saves=*/false, options.all,
                                    [&](int offset) {
                                      req.mutable_plan_page()->set_offset(offset);
                                      return ctx.coordinator->SubmitRun(req);
                                    });
    if (!printed.ok()) return ctx.Fail(printed);
    PrintPlanStopping(ctx.out(), resp->plan_summary());
    for (const std::string& line : TagUseLines(resp->tag_uses())) ctx.out() << line << '\n';
    ctx.err() << "dry run: nothing was submitted\n";
  } else {
    // The id alone on stdout, so that RUN=$(longhaul submit f.yaml) works.
    ctx.out() << resp->run().id() << '\n';
    int reuse = Reused(resp->plan_summary());
    ctx.err() << "submitted run " << resp->run().id() << " of workflow '" << wf->name << "' ("
              << wf->stages.size() << " stages" << (reuse ? StrCat(", ", reuse, " reused") : "")
              << ")\n";
    for (const std::string& line : TagUseLines(resp->tag_uses())) ctx.err() << line << '\n';
  }
  ctx.out().flush();
  if (options.dry_run || !options.watch) return kExitOk;
  return Watch(ctx, resp->run().id());
}

int Pivot(CommandContext& ctx, const PivotOptions& options) {
  Result<std::map<std::string, std::string>> sets = ParseSets(options.sets);
  if (!sets.ok()) return ctx.Fail(sets.status());
  v1::PivotRunRequest req;
  req.set_run_id(options.run_id);
  for (const auto& [k, v] : *sets) (*req.mutable_params())[k] = v;
  req.set_from_stage(options.from_stage);
  req.set_dry_run(options.dry_run);
  req.set_no_cache(options.no_cache);
  req.set_submission_id(NewSubmissionId());
  req.mutable_plan_page()->set_limit(ctx.json ? 0 : options.all ? kPlanPage : kPlanShown);
  Result<v1::SubmitRunResponse> resp =
      CallOnce(ctx, [&] { return ctx.coordinator->PivotRun(req); });
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) {
    PrintJson(ctx, *resp);
  } else {
    // The plan goes to stderr for a real pivot, so stdout stays the new run's id alone.
    std::ostream& plan_out = options.dry_run ? ctx.out() : ctx.err();
    const v1::PlanSummary& summary = resp->plan_summary();
    int reuse = Reused(summary);
    plan_out << (options.dry_run ? "plan for" : "pivot of") << " run " << options.run_id << ": "
             << reuse << " of " << summary.stages() << " stages reused\n";
    // What reusing each stage saves: its recorded wall time and GPU-hours. Pages after the
    // first are asked of a dry run, so a real pivot still makes one run.
    v1::PivotRunRequest more = req;
    more.set_dry_run(true);
    Status printed = PrintPlanTable(ctx, plan_out, *resp, /*with_saves=*/true, options.all,
                                    [&](int offset) {
                                      more.mutable_plan_page()->set_offset(offset);
                                      return ctx.coordinator->PivotRun(more);
                                    });
    if (!printed.ok()) return ctx.Fail(printed);
    if (reuse > 0) {
      plan_out << "reusing saves "
               << FormatDuration(static_cast<int64_t>(summary.saved_wall_seconds() * 1000))
               << " of stage time, " << FormatGpuHours(summary.saved_gpu_hours())
               << " GPU-hours\n";
    }
    PrintPlanStopping(plan_out, summary);
    for (const std::string& line : TagUseLines(resp->tag_uses())) plan_out << line << '\n';
    if (options.dry_run) {
      ctx.err() << "dry run: nothing was submitted\n";
    } else {
      ctx.out() << resp->run().id() << '\n';
      ctx.err() << "submitted run " << resp->run().id() << " (parent: run " << options.run_id
                << ")\n";
    }
  }
  ctx.out().flush();
  if (options.dry_run || !options.watch) return kExitOk;
  return Watch(ctx, resp->run().id());
}

}  // namespace longhaul::cli

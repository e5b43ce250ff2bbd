// submit and validate: the commands that read a workflow file.
#include <filesystem>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"
#include "core/fs.h"
#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::cli {
namespace {

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

void PrintPlan(CommandContext& ctx, const v1::SubmitRunResponse& resp) {
  Table table({"STAGE", "ACTION", "REASON"});
  for (const v1::PlanEntry& e : resp.plan()) {
    std::string reason = e.reason();
    if (e.action() == "reuse" && e.reuse_run_id() > 0) {
      std::string from = StrCat("from run ", e.reuse_run_id());
      if (!e.reuse_stage().empty() && e.reuse_stage() != e.stage()) {
        from += StrCat(", stage ", e.reuse_stage());
      }
      reason = reason.empty() ? from : StrCat(reason, " (", from, ")");
    }
    table.AddRow({e.stage(), e.action(), reason});
  }
  table.Render(ctx.out());
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
  for (const workflow::StageSpec& s : wf->stages) {
    table.AddRow({s.name, s.kind == workflow::StageKind::kService ? "service" : "task",
                  s.needs.empty() ? "-" : StrJoin(s.needs, ","), ShellJoin(s.run)});
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
  for (const auto& [k, v] : *sets) (*req.mutable_params())[k] = v;
  req.set_dry_run(options.dry_run);
  req.set_no_cache(options.no_cache);
  Result<v1::SubmitRunResponse> resp = ctx.coordinator->SubmitRun(req);
  if (!resp.ok()) return ctx.Fail(resp.status());

  if (ctx.json) {
    PrintJson(ctx, *resp);
  } else if (options.dry_run) {
    PrintPlan(ctx, *resp);
    ctx.err() << "dry run: nothing was submitted\n";
  } else {
    // The id alone on stdout, so that RUN=$(longhaul submit f.yaml) works.
    ctx.out() << resp->run().id() << '\n';
    int reuse = 0;
    for (const v1::PlanEntry& e : resp->plan()) reuse += e.action() == "reuse";
    ctx.err() << "submitted run " << resp->run().id() << " of workflow '" << wf->name << "' ("
              << wf->stages.size() << " stages" << (reuse ? StrCat(", ", reuse, " reused") : "")
              << ")\n";
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
  Result<v1::SubmitRunResponse> resp = ctx.coordinator->PivotRun(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) {
    PrintJson(ctx, *resp);
  } else {
    // The plan goes to stderr for a real pivot, so stdout stays the new run's id alone.
    std::ostream& plan_out = options.dry_run ? ctx.out() : ctx.err();
    int reuse = 0;
    for (const v1::PlanEntry& e : resp->plan()) reuse += e.action() == "reuse";
    plan_out << (options.dry_run ? "plan for" : "pivot of") << " run " << options.run_id << ": "
             << reuse << " of " << resp->plan_size() << " stages reused\n";
    {
      // What reusing each stage saves: its recorded wall time and GPU-hours.
      Table table({"STAGE", "ACTION", "SAVES", "REASON"});
      double saved_s = 0, saved_gpu_h = 0;
      for (const v1::PlanEntry& e : resp->plan()) {
        table.AddRow({e.stage(), e.action(), SavedText(e), e.reason()});
        saved_s += e.saved_wall_seconds();
        saved_gpu_h += e.saved_gpu_hours();
      }
      table.Render(plan_out);
      if (reuse > 0) {
        plan_out << "reusing saves " << FormatDuration(static_cast<int64_t>(saved_s * 1000))
                 << " of stage time, " << FormatGpuHours(saved_gpu_h) << " GPU-hours\n";
      }
    }
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

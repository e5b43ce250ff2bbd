// `longhaul budget --team|--workflow` and `longhaul budgets`: GPU-hour budgets across runs
// (docs/scheduling.md, "Budgets for a team or a workflow").
#include <cstdio>

#include "cli/cli_env.h"
#include "cli/commands.h"
#include "cli/coordinator.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/duration.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

// "reached: runs 41, 42 paused", "82 %".
std::string ScopeBudgetState(const v1::ScopeBudget& b) {
  if (b.reached()) {
    std::vector<std::string> runs;
    for (int64_t id : b.paused_runs()) runs.push_back(std::to_string(id));
    return StrCat("reached", b.hard() ? " (hard)" : "",
                  runs.empty() ? ""
                               : StrCat(": run", runs.size() > 1 ? "s " : " ", StrJoin(runs, ", "),
                                        " paused"));
  }
  int percent = b.gpu_hours() > 0 ? static_cast<int>(b.used_gpu_hours() * 100 / b.gpu_hours()) : 0;
  return StrCat(percent, " %", b.hard() ? " (hard)" : "");
}

}  // namespace

int SetScopeBudget(CommandContext& ctx, const ScopeBudgetOptions& options) {
  v1::SetBudgetRequest req;
  req.set_scope(options.team.empty() ? "workflow" : "team");
  req.set_name(options.team.empty() ? options.workflow : options.team);
  req.set_gpu_hours(options.gpu_hours);
  req.set_hard(options.hard);
  if (!options.period.empty()) {
    Result<int64_t> ms = ParseDurationMs(options.period);
    if (!ms.ok()) {
      return ctx.Fail(absl::InvalidArgumentError(
          StrCat("--period '", options.period, "': expected a duration such as 30d or 7d")));
    }
    req.set_period_ms(*ms);
  }
  Result<v1::ScopeBudget> b = ctx.coordinator->SetBudget(req);
  if (!b.ok()) return ctx.Fail(b.status());
  if (ctx.json) return PrintJson(ctx, *b);
  ctx.out() << b->scope() << " " << TerminalSafe(b->name()) << ": budget "
            << FormatBudgetHours(b->gpu_hours()) << " GPU-h for "
            << FormatWholeDurationMs(b->period_ms()) << (b->hard() ? " (hard)" : "") << ", "
            << FormatBudgetHours(b->used_gpu_hours()) << " used since "
            << FormatLocalTime(b->period_start_ms())
            << (b->reached() ? "; reached: its runs start no new attempts"
                             : "; its runs may start new attempts")
            << "\n";
  return kExitOk;
}

int ListBudgets(CommandContext& ctx) {
  Result<v1::ListBudgetsResponse> resp = ctx.coordinator->ListBudgets(v1::ListBudgetsRequest());
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->budgets().empty()) {
    ctx.err() << "no team or workflow budgets (longhaul budget --team NAME --gpu-hours N)\n";
    return kExitOk;
  }
  Table table({"SCOPE", "NAME", "LIMIT", "USED", "PERIOD", "SINCE", "STATE", "SET BY"});
  table.AlignRight(2);
  table.AlignRight(3);
  table.LimitWidth(6, 60);
  for (const v1::ScopeBudget& b : resp->budgets()) {
    table.AddRow({b.scope(), TerminalSafe(b.name()), FormatBudgetHours(b.gpu_hours()),
                  FormatBudgetHours(b.used_gpu_hours()), FormatWholeDurationMs(b.period_ms()),
                  FormatLocalTime(b.period_start_ms()), ScopeBudgetState(b),
                  TerminalSafe(b.set_by())});
  }
  table.Render(ctx.out());
  return kExitOk;
}

}  // namespace longhaul::cli

// `longhaul quotas`, `longhaul quota --team T ...` and `longhaul budget --team|--workflow NAME
// --rm`: quotas seen and changed at run time, and budgets removed (docs/scheduling.md, "Seeing
// quotas", "Changing quotas at run time", "Budgets for a team or a workflow").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

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

// "team vision" for "team:vision".
std::string QuotaAccountText(const std::string& account) {
  size_t colon = account.find(':');
  if (colon == std::string::npos) return TerminalSafe(account);
  return StrCat(account.substr(0, colon), " ", TerminalSafe(account.substr(colon + 1)));
}

std::string QuotaFigure(bool has, int32_t n) { return has ? std::to_string(n) : "-"; }

// "12.5/500 per 7d", "-" without a GPU-hour quota.
std::string QuotaWindowText(const v1::Quota& q) {
  if (!q.has_gpu_hours()) return "-";
  return StrCat(FormatBudgetHours(q.window_gpu_hours()), "/", FormatBudgetHours(q.gpu_hours()),
                " per ", TerminalSafe(q.period()));
}

void QuotaOptionsToRequest(const QuotaOptions& o, v1::SetQuotaRequest* req) {
  req->set_team(o.team);
  if (o.gpus) req->set_gpus(*o.gpus);
  if (o.borrow) req->set_borrow(*o.borrow);
  if (o.gpu_hours) req->set_gpu_hours(*o.gpu_hours);
  req->set_period(o.period);
}

}  // namespace

void RenderQuotas(const v1::ListQuotasResponse& resp, std::ostream& out) {
  Table table({"ACCOUNT", "GUARANTEED", "LIMIT", "IN USE", "BORROWED", "LENT", "GPU-H USED",
               "FAIR SHARE", "WAITING", "SET BY"});
  for (size_t column : {1, 2, 3, 4, 5, 7, 8}) table.AlignRight(column);
  for (const v1::Quota& q : resp.quotas()) {
    int32_t limit = q.has_borrow() ? q.borrow() : q.gpus();
    std::string fair = resp.fair_share_half_life_ms() > 0
                           ? StrCat(FormatBudgetHours(q.decayed_gpu_hours()), " GPU-h")
                           : "-";
    table.AddRow({QuotaAccountText(q.account()), QuotaFigure(q.has_gpus(), q.gpus()),
                  QuotaFigure(q.has_borrow() || q.has_gpus(), limit), std::to_string(q.in_use()),
                  std::to_string(q.borrowed()), std::to_string(q.lent()), QuotaWindowText(q), fair,
                  std::to_string(q.stages_waiting()),
                  q.has_quota() ? TerminalSafe(q.set_by()) : "(no quota)"});
  }
  table.Render(out);
  if (resp.fair_share_half_life_ms() > 0) {
    out << "fair share: past GPU-hours count half as much every "
        << FormatWholeDurationMs(resp.fair_share_half_life_ms())
        << "; the least used for its guarantee goes first\n";
  } else {
    out << "fair share: off (--fair-share-half-life 0); the queue goes by class and age\n";
  }
}

int ListQuotas(CommandContext& ctx) {
  Result<v1::ListQuotasResponse> resp = ctx.coordinator->ListQuotas(v1::ListQuotasRequest());
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->quotas().empty()) {
    ctx.err() << "no quotas, and no GPUs in use or waiting (longhaul quota --team NAME --gpus N)\n";
    return kExitOk;
  }
  RenderQuotas(*resp, ctx.out());
  return kExitOk;
}

int SetQuota(CommandContext& ctx, const QuotaOptions& options) {
  if (options.remove) {
    if (options.gpus || options.borrow || options.gpu_hours || !options.period.empty()) {
      return ctx.Fail(absl::InvalidArgumentError(
          "quota: --rm takes no --gpus, --borrow, --gpu-hours or --period"));
    }
    v1::RemoveQuotaRequest req;
    req.set_team(options.team);
    Result<v1::Quota> was = ctx.coordinator->RemoveQuota(req);
    if (!was.ok()) return ctx.Fail(was.status());
    if (ctx.json) return PrintJson(ctx, *was);
    ctx.out() << "team " << TerminalSafe(options.team) << ": quota " << TerminalSafe(was->rule())
              << " removed; it is guaranteed nothing and limited by nothing now\n";
    return kExitOk;
  }
  v1::SetQuotaRequest req;
  QuotaOptionsToRequest(options, &req);
  Result<v1::Quota> q = ctx.coordinator->SetQuota(req);
  if (!q.ok()) return ctx.Fail(q.status());
  if (ctx.json) return PrintJson(ctx, *q);
  ctx.out() << "team " << TerminalSafe(options.team) << ": quota " << TerminalSafe(q->rule())
            << " (" << q->in_use() << " GPUs in use, " << q->stages_waiting()
            << " GPU stages waiting); it applies from the next dispatch pass\n";
  return kExitOk;
}

int RemoveScopeBudget(CommandContext& ctx, const ScopeBudgetOptions& options) {
  v1::RemoveBudgetRequest req;
  req.set_scope(options.team.empty() ? "workflow" : "team");
  req.set_name(options.team.empty() ? options.workflow : options.team);
  Result<v1::ScopeBudget> was = ctx.coordinator->RemoveBudget(req);
  if (!was.ok()) return ctx.Fail(was.status());
  if (ctx.json) return PrintJson(ctx, *was);
  ctx.out() << was->scope() << " " << TerminalSafe(was->name()) << ": budget "
            << FormatBudgetHours(was->gpu_hours()) << " GPU-h for "
            << FormatWholeDurationMs(was->period_ms()) << " removed"
            << (was->paused_runs().empty() ? "" : "; the runs it paused continue") << "\n";
  return kExitOk;
}

void AddQuotaCommands(CLI::App& app, std::function<int(CommandContext&)>& action) {
  auto options = std::make_shared<QuotaOptions>();
  CLI::App* cmd = app.add_subcommand(
      "quota", "set or remove a team's GPU quota without a restart (admin, audited)");
  cmd->add_option("--team", options->team, "the team")->required();
  cmd->add_option("--gpus", options->gpus, "GPUs guaranteed at once");
  cmd->add_option("--borrow", options->borrow,
                  "the most GPUs at once, borrowing idle ones (at least --gpus)");
  cmd->add_option("--gpu-hours", options->gpu_hours, "at most this many GPU-hours in any --period");
  cmd->add_option("--period", options->period, "with --gpu-hours: the rolling window, as 7d");
  cmd->add_flag("--rm", options->remove,
                "remove the team's quota (--quota's too): it is guaranteed and limited by nothing");
  cmd->callback([options, &action] {
    action = [options](CommandContext& c) { return SetQuota(c, *options); };
  });
  cmd = app.add_subcommand(
      "quotas",
      "list GPU quotas and use: guaranteed, limit, in use, borrowed, lent, GPU-hours, fair "
      "share, waiting stages");
  cmd->callback([&action] { action = [](CommandContext& c) { return ListQuotas(c); }; });
}

}  // namespace longhaul::cli

// notify: the deliveries of notifications, and a sample sent through longhauld.
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"

namespace longhaul::cli {

int NotifyList(CommandContext& ctx, const NotifyListOptions& options) {
  v1::ListNotificationsRequest req;
  req.set_run_id(options.run_id);
  req.set_limit(options.limit);
  req.set_before_id(options.before_id);
  Result<v1::ListNotificationsResponse> resp = ctx.coordinator->ListNotifications(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->notifications().empty()) {
    ctx.err() << "no notifications" << (options.run_id > 0 ? " for this run" : "") << "\n";
    return kExitOk;
  }
  Table table({"ID", "TIME", "KIND", "RUN", "STAGE", "SINK", "STATE", "TRIES", "LAST ERROR"});
  table.AlignRight(0);
  for (const v1::Notification& n : resp->notifications()) {
    std::string state = n.state();
    if (n.state() == "pending" && n.next_try_at_ms() > 0) {
      state += " (next " + FormatLocalTime(n.next_try_at_ms()) + ")";
    }
    table.AddRow({std::to_string(n.id()), FormatLocalTime(n.created_at_ms()), n.kind(),
                  n.run_id() > 0 ? std::to_string(n.run_id()) : "-", n.stage(), n.sink(), state,
                  std::to_string(n.tries()), n.last_error()});
  }
  table.Render(ctx.out());
  return kExitOk;
}

int NotifyTest(CommandContext& ctx, const NotifyTestOptions& options) {
  v1::TestNotifyRequest req;
  for (const auto& url : options.webhooks) req.add_webhooks(url);
  for (const auto& arg : options.command) req.add_command(arg);
  req.set_format(options.format);
  Result<v1::TestNotifyResponse> resp = ctx.coordinator->TestNotify(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) {
    int code = PrintJson(ctx, *resp);
    if (code != kExitOk) return code;
  }
  bool all_ok = true;
  for (const auto& d : resp->deliveries()) {
    all_ok = all_ok && d.ok();
    if (!ctx.json) {
      ctx.out() << d.sink() << ": " << (d.ok() ? "delivered" : "failed: " + d.error()) << "\n";
    }
  }
  return all_ok ? kExitOk : kExitOther;
}

}  // namespace longhaul::cli

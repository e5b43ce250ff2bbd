// audit: who changed what, when and from where (admin).
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"

namespace longhaul::cli {

int ListAudit(CommandContext& ctx, const AuditOptions& options) {
  v1::ListAuditRequest req;
  req.set_limit(options.limit);
  req.set_before_id(options.before_id);
  Result<v1::ListAuditResponse> resp = ctx.coordinator->ListAudit(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->entries().empty()) {
    ctx.err() << "the audit trail is empty\n";
    return kExitOk;
  }
  Table table({"ID", "TIME", "WHO", "ROLE", "FROM", "ACTION", "TARGET", "RESULT", "DETAIL"});
  table.AlignRight(0);
  for (const v1::AuditEntry& e : resp->entries()) {
    table.AddRow({std::to_string(e.id()), FormatLocalTime(e.ts_ms()), e.principal(), e.role(),
                  e.peer(), e.action(), e.target(), e.result(), e.detail()});
  }
  table.Render(ctx.out());
  return kExitOk;
}

}  // namespace longhaul::cli

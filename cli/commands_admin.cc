// admin backup: longhauld copies its database to a file on its own host.
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"

namespace longhaul::cli {

int Backup(CommandContext& ctx, const std::string& path) {
  v1::BackupRequest req;
  req.set_path(path);
  Result<v1::BackupResponse> resp = ctx.coordinator->Backup(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  ctx.out() << "backed up to " << resp->path() << " on the coordinator's host: " << resp->pages()
            << " pages of " << resp->page_size() << " bytes (" << resp->bytes()
            << " bytes), schema version " << resp->schema_version() << ", integrity_check ok; copy "
            << resp->copy_ms() << " ms, check " << resp->check_ms() << " ms, total "
            << resp->total_ms() << " ms\n";
  return kExitOk;
}

}  // namespace longhaul::cli

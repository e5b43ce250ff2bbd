// gc: retention by hand (admin). Prints, per run, why it was chosen, what goes and what stays.
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"
#include "core/duration.h"
#include "core/strings.h"

namespace longhaul::cli {

int CollectGarbage(CommandContext& ctx, const GcOptions& options) {
  v1::GcRequest req;
  req.set_dry_run(options.dry_run);
  if (!options.older_than.empty()) {
    Result<int64_t> ms = ParseDurationMs(options.older_than);
    if (!ms.ok()) {
      return ctx.Fail(absl::InvalidArgumentError(StrCat("--older-than: ", ms.status().message())));
    }
    req.set_older_than_ms(*ms);
  }
  req.set_keep_last(options.keep_last);
  req.set_workflow(options.workflow);
  for (int64_t id : options.runs) req.add_run_ids(id);
  Result<v1::GcResponse> resp = ctx.coordinator->CollectGarbage(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->runs().empty()) {
    ctx.out() << "nothing to collect (policy: " << resp->policy() << ")\n";
    return kExitOk;
  }
  Table table({"RUN", "WORKFLOW", "WHY", "ATTEMPT DIRS", "OUTPUT DIRS", "BYTES", "EVENTS", "KEPT"});
  table.AlignRight(0);
  bool failed = false;
  for (const v1::GcRun& r : resp->runs()) {
    table.AddRow({std::to_string(r.run_id()), r.workflow_name(), r.why(),
                  std::to_string(r.attempt_dirs()), std::to_string(r.output_dirs()),
                  FormatBytes(r.bytes()), std::to_string(r.events()),
                  std::to_string(r.kept_size()) + " stage(s)"});
  }
  table.Render(ctx.out());
  for (const v1::GcRun& r : resp->runs()) {
    for (const std::string& k : r.kept()) ctx.out() << "  run " << r.run_id() << " keeps " << k << "\n";
    if (!r.error().empty()) {
      failed = true;
      ctx.err() << "run " << r.run_id() << ": " << r.error() << "\n";
    }
  }
  ctx.out() << (resp->dry_run() ? "would free " : "freed ") << FormatBytes(resp->bytes())
            << " on the agents and " << resp->events() << " event rows ("
            << (resp->dry_run() ? resp->runs_size() : resp->runs_collected())
            << " run(s); policy: " << resp->policy() << ")\n";
  return failed ? kExitOther : kExitOk;
}

}  // namespace longhaul::cli

// logs: a stage attempt's stdout or stderr, read through the coordinator from the agent.
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

constexpr int kChunkBytes = 64 * 1024;
// While the agent (or, once reached, the coordinator) is away, ask again this often.
constexpr int64_t kAwayRetryMs = 500;

}  // namespace

int Logs(CommandContext& ctx, const LogsOptions& options) {
  if (options.tail_bytes < 0) {
    return ctx.Fail(absl::InvalidArgumentError("--tail: expected a number of bytes >= 0"));
  }
  v1::ReadLogRequest req;
  req.set_run_id(options.run_id);
  req.set_stage(options.stage);
  req.set_attempt(options.attempt);
  req.set_stream(options.stderr_stream ? "stderr" : "stdout");
  req.set_offset(options.tail_bytes > 0 ? -options.tail_bytes : 0);
  req.set_max_bytes(kChunkBytes);
  bool reached = false;     // the coordinator answered once
  std::string waiting_for;  // the note printed while retrying, to print it once
  for (;;) {
    Result<v1::ReadLogResponse> resp = ctx.coordinator->ReadLog(req);
    if (!resp.ok()) {
      const Status& s = resp.status();
      bool agent_away = s.code() == absl::StatusCode::kUnavailable && !IsCoordinatorUnreachable(s);
      bool coordinator_away = IsCoordinatorUnreachable(s) && reached;
      if (!options.follow || !(agent_away || coordinator_away)) return ctx.Fail(s);
      std::string note = ToStd(s.message());
      if (note != waiting_for) {
        ctx.err() << "longhaul: " << note << "; retrying (Ctrl-C to stop)\n";
        waiting_for = note;
      }
      ctx.env.sleep_ms(kAwayRetryMs);
      continue;
    }
    reached = true;
    if (!waiting_for.empty()) {
      ctx.err() << "longhaul: reading the log again\n";
      waiting_for.clear();
    }
    if (!resp->data().empty()) {
      ctx.out() << resp->data();
      ctx.out().flush();
    }
    // Keep to the attempt the first answer chose, even if a retry starts meanwhile.
    req.set_attempt(resp->attempt());
    req.set_offset(resp->next_offset());
    if (!resp->data().empty()) continue;
    if (resp->finished() || !options.follow) break;
    ctx.env.sleep_ms(options.poll_ms);
  }
  return kExitOk;
}

}  // namespace longhaul::cli

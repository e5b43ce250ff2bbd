// logs: a stage attempt's stdout or stderr, read through the coordinator from the agent.
#include <optional>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/terminal_text.h"
#include "core/log_search.h"
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
  std::optional<LogLineSearch> filter;
  if (!options.grep.empty()) {
    Result<LogLineMatcher> matcher =
        LogLineMatcher::Make({.text = options.grep, .regex = true}, "--grep");
    if (!matcher.ok()) return ctx.Fail(matcher.status());
    filter.emplace(std::move(*matcher), 0);
  }
  v1::ReadLogRequest req;
  req.set_run_id(options.run_id);
  req.set_stage(options.stage);
  req.set_attempt(options.attempt);
  req.set_stream(options.stderr_stream ? "stderr" : "stdout");
  req.set_offset(options.tail_bytes > 0 ? -options.tail_bytes : 0);
  req.set_max_bytes(kChunkBytes);
  // On a terminal the log is shown, never obeyed: a stage's escape sequences come out visible.
  std::optional<TerminalSafeLog> escape;
  if (ctx.env.stdout_is_tty && !options.raw) escape.emplace();
  // The filter sees the raw bytes (it matches lines as a terminal shows them); what passes is
  // made safe for the terminal after.
  auto print = [&](std::string_view data) {
    if (!data.empty()) ctx.out() << (escape ? escape->Feed(data) : std::string(data));
  };
  auto print_line = [&](int64_t, std::string_view line) { print(line); };
  auto emit = [&](std::string_view data) {
    if (filter) {
      filter->Feed(data, print_line);
    } else {
      print(data);
    }
  };
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
      emit(resp->data());
      ctx.out().flush();
    }
    // Keep to the attempt the first answer chose, even if a retry starts meanwhile.
    req.set_attempt(resp->attempt());
    req.set_offset(resp->next_offset());
    if (!resp->data().empty()) continue;
    if (resp->finished() || !options.follow) break;
    ctx.env.sleep_ms(options.poll_ms);
  }
  if (filter) filter->Finish(print_line);
  if (escape) ctx.out() << escape->Finish();
  return kExitOk;
}

}  // namespace longhaul::cli

// logs: a stage attempt's stdout or stderr, read through the coordinator from the agent.
#include <optional>
#include <regex>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/terminal_text.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

// Passes on the whole lines `re` finds; a line split across reads waits for its end.
class LineFilter {
 public:
  explicit LineFilter(std::regex re) : re_(std::move(re)) {}
  void Feed(const std::string& data, std::ostream& out) {
    partial_ += data;
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      Emit(std::string_view(partial_).substr(start, nl + 1 - start), out);
    }
    partial_.erase(0, start);
  }
  // The log has ended: a last line without a newline counts too.
  void Finish(std::ostream& out) {
    if (!partial_.empty()) Emit(partial_, out);
    partial_.clear();
  }

 private:
  void Emit(std::string_view line, std::ostream& out) {
    std::string_view text = line;
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    if (std::regex_search(text.begin(), text.end(), re_)) out << line;
  }
  std::regex re_;
  std::string partial_;
};

constexpr int kChunkBytes = 64 * 1024;
// While the agent (or, once reached, the coordinator) is away, ask again this often.
constexpr int64_t kAwayRetryMs = 500;

}  // namespace

int Logs(CommandContext& ctx, const LogsOptions& options) {
  if (options.tail_bytes < 0) {
    return ctx.Fail(absl::InvalidArgumentError("--tail: expected a number of bytes >= 0"));
  }
  std::optional<LineFilter> filter;
  if (!options.grep.empty()) {
    try {
      filter.emplace(std::regex(options.grep, std::regex::ECMAScript));
    } catch (const std::regex_error& e) {
      return ctx.Fail(absl::InvalidArgumentError(
          StrCat("--grep '", options.grep, "': not a regular expression: ", e.what())));
    }
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
  auto emit = [&](std::string_view data) {
    if (data.empty()) return;
    if (filter) {
      filter->Feed(std::string(data), ctx.out());
    } else {
      ctx.out() << data;
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
      emit(escape ? escape->Feed(resp->data()) : resp->data());
      ctx.out().flush();
    }
    // Keep to the attempt the first answer chose, even if a retry starts meanwhile.
    req.set_attempt(resp->attempt());
    req.set_offset(resp->next_offset());
    if (!resp->data().empty()) continue;
    if (resp->finished() || !options.follow) break;
    ctx.env.sleep_ms(options.poll_ms);
  }
  if (escape) emit(escape->Finish());
  if (filter) filter->Finish(ctx.out());
  return kExitOk;
}

}  // namespace longhaul::cli

// agent drain|undrain: maintenance windows of agents (docs/scheduling.md, "Maintenance").
#include "absl/time/time.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/terminal_text.h"
#include "core/duration.h"
#include "core/strings.h"

namespace longhaul::cli {

Result<int64_t> ParseDrainAt(const std::string& text, int64_t now_ms, std::string_view flag) {
  if (text.empty()) return now_ms;
  if (text[0] == '+') {
    Result<int64_t> after = ParseDurationMs(std::string_view(text).substr(1));
    if (!after.ok()) {
      return absl::InvalidArgumentError(StrCat(flag, " '", text, "': ", after.status().message()));
    }
    return now_ms + *after;
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    return absl::InvalidArgumentError(StrCat(
        flag, " '", text,
        "': expected an RFC 3339 time (2026-12-05T14:00:00Z) or a time from now (+2h, +30m)"));
  }
  return absl::ToUnixMillis(t);
}

std::string DescribeDrain(const std::string& agent_id, const v1::AgentDrain& d, int64_t now_ms) {
  std::string when = absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(d.at_ms()),
                                      absl::UTCTimeZone());
  std::string head = d.at_ms() > now_ms ? StrCat("agent ", agent_id, " drains at ", when, " (in ",
                                                 FormatDurationMs(d.at_ms() - now_ms), ")")
                                        : StrCat("agent ", agent_id, " is drained since ", when);
  return StrCat(head, d.reason().empty() ? "" : StrCat(": ", TerminalSafe(d.reason())),
                d.by().empty() ? "" : StrCat(" (by ", TerminalSafe(d.by()), ")"));
}

int DrainAgent(CommandContext& ctx, const std::string& agent_id, const std::string& at,
               const std::string& reason, bool undrain) {
  v1::DrainAgentRequest req;
  req.set_agent_id(agent_id);
  req.set_undrain(undrain);
  req.set_reason(reason);
  if (!undrain) {
    Result<int64_t> at_ms = ParseDrainAt(at, ctx.NowMs());
    if (!at_ms.ok()) return ctx.Fail(at_ms.status());
    req.set_at_ms(*at_ms);
  }
  Result<v1::DrainAgentResponse> resp = ctx.coordinator->DrainAgent(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->agent().has_drain()) {
    ctx.out() << DescribeDrain(agent_id, resp->agent().drain(), ctx.NowMs()) << "\n";
  } else {
    ctx.out() << "agent " << agent_id << ": not drained; offered to new attempts\n";
  }
  return kExitOk;
}

}  // namespace longhaul::cli

// reserve, reservations, unreserve: agents' GPUs held for a user or team for a time window
// (docs/scheduling.md, "Reservations").
#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "cli/coordinator.h"
#include "cli/exit_codes.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

std::string ReservationTime(int64_t ms) {
  return absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::FromUnixMillis(ms), absl::UTCTimeZone());
}

// "2026-12-05 14:00 UTC - 18:00 UTC" (the end's day only when it differs).
std::string ReservationWindow(const v1::Reservation& r) {
  absl::TimeZone utc = absl::UTCTimeZone();
  bool same_day = absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(r.from_ms()), utc) ==
                  absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(r.until_ms()), utc);
  return StrCat(ReservationTime(r.from_ms()), " - ",
                same_day ? absl::FormatTime("%H:%M UTC", absl::FromUnixMillis(r.until_ms()), utc)
                         : ReservationTime(r.until_ms()));
}

std::string ReservationState(const v1::Reservation& r, int64_t now_ms) {
  if (r.cancelled_at_ms() > 0) return "cancelled";
  if (r.until_ms() <= now_ms) return "ended";
  return r.from_ms() <= now_ms ? "in force" : "to come";
}

}  // namespace

std::string DescribeReservation(const v1::Reservation& r) {
  return StrCat("reservation ", r.id(), ": ", r.gpus(), " of ", r.agent_id(), "'s GPUs for ",
                r.holder_kind(), " ", TerminalSafe(r.holder()), ", ", ReservationWindow(r),
                r.reason().empty() ? "" : StrCat(": ", TerminalSafe(r.reason())),
                r.by().empty() ? "" : StrCat(" (by ", TerminalSafe(r.by()), ")"));
}

int Reserve(CommandContext& ctx, const ReserveOptions& options) {
  v1::ReserveRequest req;
  req.set_agent_id(options.agent);
  if (options.gpus == "all") {
    req.set_all_gpus(true);
  } else {
    int gpus = 0;
    if (!absl::SimpleAtoi(options.gpus, &gpus) || gpus <= 0) {
      return ctx.Fail(absl::InvalidArgumentError(
          StrCat("--gpus '", options.gpus, "': expected a number of GPUs (1 or more) or 'all'")));
    }
    req.set_gpus(gpus);
  }
  if (options.team.empty() == options.user.empty()) {
    return ctx.Fail(absl::InvalidArgumentError("reserve: give --team TEAM or --user USER"));
  }
  req.set_holder_kind(options.team.empty() ? "user" : "team");
  req.set_holder(options.team.empty() ? options.user : options.team);
  int64_t now = ctx.NowMs();
  if (!options.from.empty()) {
    Result<int64_t> from = ParseDrainAt(options.from, now, "--from");
    if (!from.ok()) return ctx.Fail(from.status());
    req.set_from_ms(*from);
  }
  Result<int64_t> until = ParseDrainAt(options.until, now, "--until");
  if (!until.ok()) return ctx.Fail(until.status());
  req.set_until_ms(*until);
  req.set_reason(options.reason);
  Result<v1::Reservation> r = ctx.coordinator->Reserve(req);
  if (!r.ok()) return ctx.Fail(r.status());
  if (ctx.json) return PrintJson(ctx, *r);
  ctx.out() << DescribeReservation(*r) << "\n";
  return kExitOk;
}

int Unreserve(CommandContext& ctx, int64_t id, const std::string& reason) {
  v1::UnreserveRequest req;
  req.set_id(id);
  req.set_reason(reason);
  Result<v1::Reservation> r = ctx.coordinator->Unreserve(req);
  if (!r.ok()) return ctx.Fail(r.status());
  if (ctx.json) return PrintJson(ctx, *r);
  ctx.out() << "reservation " << r->id() << " cancelled: " << r->gpus() << " of " << r->agent_id()
            << "'s GPUs are everyone's again\n";
  return kExitOk;
}

int ListReservations(CommandContext& ctx, bool all) {
  v1::ListReservationsRequest req;
  req.set_all(all);
  Result<v1::ListReservationsResponse> resp = ctx.coordinator->ListReservations(req);
  if (!resp.ok()) return ctx.Fail(resp.status());
  if (ctx.json) return PrintJson(ctx, *resp);
  if (resp->reservations().empty()) {
    ctx.err() << (all ? "no reservations" : "no reservations in force or to come")
              << " (longhaul reserve AGENT --gpus N --team TEAM --until TIME --reason WHY)\n";
    return kExitOk;
  }
  int64_t now = ctx.NowMs();
  Table table({"ID", "AGENT", "GPUS", "HOLDER", "WINDOW", "STATE", "REASON", "BY"});
  table.AlignRight(0);
  table.AlignRight(2);
  table.LimitWidth(6, 60);
  for (const v1::Reservation& r : resp->reservations()) {
    table.AddRow({std::to_string(r.id()), r.agent_id(), std::to_string(r.gpus()),
                  StrCat(r.holder_kind(), " ", TerminalSafe(r.holder())), ReservationWindow(r),
                  ReservationState(r, now), TerminalSafe(r.reason()), TerminalSafe(r.by())});
  }
  table.Render(ctx.out());
  return kExitOk;
}

}  // namespace longhaul::cli

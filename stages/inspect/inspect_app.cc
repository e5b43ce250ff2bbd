#include "stages/inspect/inspect_app.h"

#include "core/strings.h"

namespace longhaul::inspect {
namespace {

bool IsUsageError(const Status& s) {
  return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound;
}

}  // namespace

int RunInspect(const InspectOptions& o, EventWriter& events, std::ostream& out, std::ostream& err) {
  std::optional<Severity> fail_on;
  if (!o.fail_on.empty()) {
    auto f = ParseFailOn(o.fail_on);
    if (!f.ok()) {
      err << "lh-inspect: " << f.status().message() << "\n";
      return 2;
    }
    fail_on = *f;
  }
  if (!o.data && !o.predictions && !o.drafter) {
    err << "lh-inspect " << o.mode
        << ": nothing to inspect (give --samples, --target and --spec, or --drafter)\n";
    return 2;
  }
  const bool combined = o.mode == "all";
  Report report;
  int parts_failed = 0;
  // In `all`, a part that cannot run is an error finding and the others still run; alone, it
  // ends the run with a message.
  auto part = [&](const char* name, const Status& s) -> std::optional<int> {
    if (s.ok()) return std::nullopt;
    if (combined) {
      ++parts_failed;
      report.Add(Severity::kError, name, "not_run", StrCat("could not run: ", s.message()));
      out << name << ": could not run: " << s.message() << "\n";
      return std::nullopt;
    }
    err << "lh-inspect " << name << ": " << s.message() << "\n";
    events.Message("error", StrCat(name, ": ", s.message()));
    return IsUsageError(s) ? 2 : 1;
  };
  bool first = true;
  auto gap = [&] {
    if (!first) out << "\n";
    first = false;
  };
  if (o.data) {
    gap();
    if (auto rc = part("data", InspectData(*o.data, report, out))) return *rc;
  }
  if (o.drafter) {
    gap();
    if (auto rc = part("drafter", InspectDrafter(*o.drafter, report, out))) return *rc;
  }
  if (o.predictions) {
    gap();
    if (auto rc = part("predictions", InspectPredictions(*o.predictions, report, out, events))) {
      return *rc;
    }
  }
  report.PrintFindings(out);
  report.Emit(events);
  std::string path = o.report_path.empty() ? StrCat("inspect_", o.mode, ".json") : o.report_path;
  if (path != "-") {
    Status s = WriteReport(report, path, events);
    if (!s.ok()) {
      err << "lh-inspect: " << s.message() << "\n";
      return 1;
    }
    out << "report: " << path << "\n";
  }
  if (parts_failed > 0) return 1;
  if (fail_on && report.Fails(*fail_on)) {
    out << "failing: findings at or above '" << o.fail_on << "' (--fail-on)\n";
    return 1;
  }
  return 0;
}

}  // namespace longhaul::inspect

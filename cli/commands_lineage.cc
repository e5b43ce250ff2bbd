// lineage: where a stage's result came from and where it went (docs/cli.md, "lineage"), as
// longhauld's GetLineage answers it (the web UI's lineage view shows the same answer).
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

std::string LineageOriginText(const v1::LineageOrigin& o) {
  return StrCat("run ", o.run_id(), " stage ", o.stage(),
                o.attempt() > 0 ? StrCat(" attempt ", o.attempt()) : std::string());
}

nlohmann::json LineageOriginJson(const v1::LineageOrigin& o) {
  return nlohmann::json{
      {"run_id", o.run_id()}, {"stage", o.stage()}, {"attempt", o.attempt()}, {"how", o.how()}};
}

}  // namespace

int StageLineage(CommandContext& ctx, const LineageOptions& options) {
  v1::GetLineageRequest req;
  req.set_run_id(options.run_id);
  req.set_stage(options.stage);
  Result<v1::GetLineageResponse> lineage = ctx.coordinator->GetLineage(req);
  if (!lineage.ok()) return ctx.Fail(lineage.status());
  const v1::GetLineageResponse& l = *lineage;

  if (ctx.json) {
    nlohmann::json j{{"run_id", l.run_id()},
                     {"stage", l.stage()},
                     {"status", std::string(StageStatusName(l.status()))},
                     {"made_by", LineageOriginJson(l.made_by())},
                     {"inputs", nlohmann::json::array()},
                     {"used_by", nlohmann::json::array()}};
    for (const v1::LineageInput& in : l.inputs()) {
      nlohmann::json o = LineageOriginJson(in.made_by());
      o["needs"] = in.needs();
      j["inputs"].push_back(o);
    }
    for (const v1::LineageUse& u : l.used_by()) {
      j["used_by"].push_back({{"run_id", u.run_id()},
                              {"stage", u.stage()},
                              {"how", u.how()},
                              {"produced", u.produced()}});
    }
    ctx.out() << j.dump() << '\n';
    return kExitOk;
  }
  std::ostream& out = ctx.out();
  out << "run " << l.run_id() << " stage " << TerminalSafe(l.stage()) << " ("
      << StageStatusName(l.status()) << ")\n";
  out << "  made by: " << TerminalSafe(LineageOriginText(l.made_by()))
      << (l.made_by().how() == "reused" ? " (reused here)" : "") << '\n';
  if (l.inputs().empty()) {
    out << "\ninputs: none (it needs no stage)\n";
  } else {
    Table t({"NEEDS", "MADE BY", "HOW"});
    for (const v1::LineageInput& in : l.inputs()) {
      t.AddRow({in.needs(), LineageOriginText(in.made_by()), in.made_by().how()});
    }
    out << "\ninputs:\n";
    t.Render(out);
  }
  if (l.used_by().empty()) {
    out << "\nused by: nothing yet\n";
  } else {
    Table t({"RUN", "STAGE", "HOW", "THEN MADE"});
    for (const v1::LineageUse& u : l.used_by()) {
      std::string made =
          StrJoin(std::vector<std::string>(u.produced().begin(), u.produced().end()), ", ");
      t.AddRow({std::to_string(u.run_id()), u.stage().empty() ? "-" : u.stage(), u.how(),
                made.empty() ? "-" : made});
    }
    out << "\nused by:\n";
    t.Render(out);
  }
  if (l.more_runs()) {
    out << "(only the newest " << l.runs_looked_at() << " runs of workflow '"
        << TerminalSafe(l.workflow_name()) << "' were looked at)\n";
  }
  return kExitOk;
}

}  // namespace longhaul::cli

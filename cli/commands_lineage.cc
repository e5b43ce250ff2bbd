// lineage: where a stage's result came from and where it went (docs/cli.md, "lineage"): the
// attempt that made it (here, or in the run it was reused from), the stages it needed and where
// their results came from, and the stages that used it (in this run, and later runs of the
// workflow that reused it).
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

// Later runs looked at for reuse of the result, newest first.
constexpr int kLineageLaterRuns = 500;

// Stages of `run_id` (only `names` when given), with attempts, every page.
Result<std::vector<v1::Stage>> LineageStages(CommandContext& ctx, int64_t run_id,
                                             const std::vector<std::string>& names) {
  std::vector<v1::Stage> out;
  v1::ListStagesRequest req;
  req.set_run_id(run_id);
  req.set_include_attempts(!names.empty());
  for (const auto& n : names) req.add_names(n);
  for (;;) {
    ASSIGN_OR_RETURN(v1::ListStagesResponse page, ctx.coordinator->ListStages(req));
    for (auto& s : *page.mutable_stages()) out.push_back(std::move(s));
    if (page.next_page_token().empty()) return out;
    req.set_page_token(page.next_page_token());
  }
}

// Where a stage's result was made: (run, stage, attempt number, state name).
struct LineageOrigin {
  int64_t run = 0;
  std::string stage;
  int attempt = 0;  // 0: none recorded
  std::string how;  // "fresh" or "reused"
};

Result<LineageOrigin> OriginOf(CommandContext& ctx, int64_t run_id, const v1::Stage& s) {
  LineageOrigin o{run_id, s.name(), s.attempt_count(), "fresh"};
  if (s.status() != v1::STAGE_CACHED || s.cached_from_run_id() <= 0) return o;
  o.run = s.cached_from_run_id();
  o.stage = s.cached_from_stage().empty() ? s.name() : s.cached_from_stage();
  o.how = "reused";
  ASSIGN_OR_RETURN(std::vector<v1::Stage> from, LineageStages(ctx, o.run, {o.stage}));
  o.attempt = from.empty() ? 0 : from[0].attempt_count();
  return o;
}

std::string OriginText(const LineageOrigin& o) {
  return StrCat("run ", o.run, " stage ", o.stage,
                o.attempt > 0 ? StrCat(" attempt ", o.attempt) : std::string());
}

}  // namespace

int StageLineage(CommandContext& ctx, const LineageOptions& options) {
  v1::GetRunRequest head;
  head.set_id(options.run_id);
  head.set_stage_limit(-1);
  Result<v1::Run> run = ctx.coordinator->GetRun(head);
  if (!run.ok()) return ctx.Fail(run.status());
  Result<std::vector<v1::Stage>> found = LineageStages(ctx, options.run_id, {options.stage});
  if (!found.ok()) return ctx.Fail(found.status());
  if (found->empty()) {
    return ctx.Fail(
        absl::NotFoundError(StrCat("run ", options.run_id, " has no stage '", options.stage, "'")));
  }
  const v1::Stage& stage = (*found)[0];
  Result<LineageOrigin> origin = OriginOf(ctx, options.run_id, stage);
  if (!origin.ok()) return ctx.Fail(origin.status());

  // Inputs: the stages it needs, and where each one's result came from.
  std::vector<std::pair<std::string, LineageOrigin>> inputs;
  std::vector<std::string> needs(stage.needs().begin(), stage.needs().end());
  if (!needs.empty()) {
    Result<std::vector<v1::Stage>> up = LineageStages(ctx, options.run_id, needs);
    if (!up.ok()) return ctx.Fail(up.status());
    for (const v1::Stage& u : *up) {
      Result<LineageOrigin> o = OriginOf(ctx, options.run_id, u);
      if (!o.ok()) return ctx.Fail(o.status());
      inputs.emplace_back(u.name(), *o);
    }
  }

  // Users: this run's stages that need it, then later runs of the workflow that reused the
  // same result (from the run that made it).
  std::vector<std::tuple<int64_t, std::string, std::string>> users;  // run, stage, how
  Result<std::vector<v1::Stage>> all = LineageStages(ctx, options.run_id, {});
  if (!all.ok()) return ctx.Fail(all.status());
  for (const v1::Stage& s : *all) {
    for (const auto& n : s.needs()) {
      if (n == stage.name()) users.emplace_back(options.run_id, s.name(), "needs it");
    }
  }
  v1::ListRunsRequest later;
  later.set_workflow(run->workflow_name());
  later.set_limit(kLineageLaterRuns);
  Result<v1::ListRunsResponse> runs = ctx.coordinator->ListRuns(later);
  if (!runs.ok()) return ctx.Fail(runs.status());
  bool more_runs = !runs->next_page_token().empty();
  for (auto it = runs->runs().rbegin(); it != runs->runs().rend(); ++it) {
    if (it->id() <= options.run_id) continue;
    Result<std::vector<v1::Stage>> same = LineageStages(ctx, it->id(), {stage.name()});
    if (!same.ok()) return ctx.Fail(same.status());
    if (same->empty()) continue;
    const v1::Stage& s = (*same)[0];
    if (s.status() == v1::STAGE_CACHED && s.cached_from_run_id() == origin->run &&
        (s.cached_from_stage().empty() ? s.name() : s.cached_from_stage()) == origin->stage) {
      users.emplace_back(it->id(), s.name(), "reused this result");
    }
  }

  if (ctx.json) {
    auto origin_json = [](const LineageOrigin& o) {
      return nlohmann::json{
          {"run_id", o.run}, {"stage", o.stage}, {"attempt", o.attempt}, {"how", o.how}};
    };
    nlohmann::json j{{"run_id", options.run_id},
                     {"stage", stage.name()},
                     {"status", std::string(StageStatusName(stage.status()))},
                     {"made_by", origin_json(*origin)},
                     {"inputs", nlohmann::json::array()},
                     {"used_by", nlohmann::json::array()}};
    for (const auto& [name, o] : inputs) {
      nlohmann::json in = origin_json(o);
      in["needs"] = name;
      j["inputs"].push_back(in);
    }
    for (const auto& [r, s, how] : users) {
      j["used_by"].push_back({{"run_id", r}, {"stage", s}, {"how", how}});
    }
    ctx.out() << j.dump() << '\n';
    return kExitOk;
  }
  std::ostream& out = ctx.out();
  out << "run " << options.run_id << " stage " << TerminalSafe(stage.name()) << " ("
      << StageStatusName(stage.status()) << ")\n";
  out << "  made by: " << TerminalSafe(OriginText(*origin))
      << (origin->how == "reused" ? " (reused here)" : "") << '\n';
  if (inputs.empty()) {
    out << "\ninputs: none (it needs no stage)\n";
  } else {
    Table t({"NEEDS", "MADE BY", "HOW"});
    for (const auto& [name, o] : inputs) t.AddRow({name, OriginText(o), o.how});
    out << "\ninputs:\n";
    t.Render(out);
  }
  if (users.empty()) {
    out << "\nused by: nothing yet\n";
  } else {
    Table t({"RUN", "STAGE", "HOW"});
    for (const auto& [r, s, how] : users) t.AddRow({std::to_string(r), s, how});
    out << "\nused by:\n";
    t.Render(out);
  }
  if (more_runs) {
    out << "(only the newest " << kLineageLaterRuns << " runs of workflow '"
        << TerminalSafe(run->workflow_name()) << "' were looked at)\n";
  }
  return kExitOk;
}

}  // namespace longhaul::cli

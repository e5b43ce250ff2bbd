// compare: two runs side by side (docs/cli.md, "compare"): params that differ, what each
// stage did, every metric of both, and what their GPUs did (compare_gpus.h).
#include <cstdio>
#include <map>
#include <set>

#include "cli/commands.h"
#include "cli/compare_gpus.h"
#include "cli/exit_codes.h"
#include "cli/provenance_view.h"
#include "cli/table.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

std::string StageSummary(const v1::Stage* s) {
  if (s == nullptr) return "-";
  if (s->status() == v1::STAGE_CACHED) {
    return s->cached_from_run_id() > 0 ? StrCat("reused (run ", s->cached_from_run_id(), ")")
                                       : "reused";
  }
  std::string out(StageStatusName(s->status()));
  if (s->attempt_count() > 1) out += StrCat(" (", s->attempt_count(), " attempts)");
  return out;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

bool Wanted(const std::vector<std::string>& filters, const std::string& stage,
            const std::string& metric) {
  if (filters.empty()) return true;
  for (const auto& f : filters) {
    if (f == metric || f == StrCat(stage, ".", metric) || f == stage) return true;
  }
  return false;
}

}  // namespace

int CompareRuns(CommandContext& ctx, const CompareOptions& options) {
  v1::Run runs[2];
  for (int i = 0; i < 2; ++i) {
    v1::GetRunRequest req;
    req.set_id(i == 0 ? options.a : options.b);
    req.set_include_attempts(true);  // their environments
    Result<v1::Run> run = ctx.coordinator->GetRun(req);
    if (!run.ok()) return ctx.Fail(run.status());
    runs[i] = std::move(*run);
  }
  if (ctx.json) {
    ctx.out() << "[";
    PrintJson(ctx, runs[0]);
    ctx.out() << ",";
    PrintJson(ctx, runs[1]);
    ctx.out() << "]\n";
    return kExitOk;
  }
  std::string ha = StrCat("run ", runs[0].id()), hb = StrCat("run ", runs[1].id());
  // First what differs besides the params: a changed engine or uncommitted code explains a
  // difference in results that the params do not.
  std::vector<ProvenanceDifference> diffs = ProvenanceDifferences(runs[0], runs[1]);
  if (!diffs.empty()) {
    Table what({"DIFFERS", ha, hb});
    for (const auto& d : diffs) what.AddRow({d.what, d.a, d.b});
    ctx.out() << "what differs besides params:\n";
    what.Render(ctx.out());
    ctx.out() << '\n';
  }
  Table head({"", ha, hb});
  head.AddRow({"workflow", runs[0].workflow_name(), runs[1].workflow_name()});
  head.AddRow({"status", std::string(RunStatusName(runs[0].status())),
               std::string(RunStatusName(runs[1].status()))});
  head.AddRow({"parent", runs[0].parent_run_id() ? StrCat("run ", runs[0].parent_run_id()) : "-",
               runs[1].parent_run_id() ? StrCat("run ", runs[1].parent_run_id()) : "-"});
  head.Render(ctx.out());

  std::set<std::string> names;
  for (const auto& r : runs) {
    for (const auto& [k, v] : r.params()) names.insert(k);
  }
  Table params({"PARAM", ha, hb});
  for (const auto& k : names) {
    auto a = runs[0].params().find(k), b = runs[1].params().find(k);
    std::string va = a == runs[0].params().end() ? "-" : a->second;
    std::string vb = b == runs[1].params().end() ? "-" : b->second;
    if (va != vb || options.all_params) params.AddRow({k, va, vb});
  }
  if (params.rows() > 0) {
    ctx.out() << "\nparams" << (options.all_params ? "" : " that differ") << ":\n";
    params.Render(ctx.out());
  }

  // Stages in the first run's order, then any the second adds.
  std::vector<std::string> order;
  std::map<std::string, const v1::Stage*> stages[2];
  for (int i = 0; i < 2; ++i) {
    for (const auto& s : runs[i].stages()) {
      if (!stages[0].count(s.name()) && !stages[1].count(s.name())) order.push_back(s.name());
      stages[i][s.name()] = &s;
    }
  }
  Table st({"STAGE", ha, hb});
  for (const auto& name : order) {
    auto a = stages[0].find(name), b = stages[1].find(name);
    st.AddRow({name, StageSummary(a == stages[0].end() ? nullptr : a->second),
               StageSummary(b == stages[1].end() ? nullptr : b->second)});
  }
  ctx.out() << "\nstages:\n";
  st.Render(ctx.out());

  Table metrics({"METRIC", ha, hb, "B/A"});
  metrics.AlignRight(1);
  metrics.AlignRight(2);
  metrics.AlignRight(3);
  for (const auto& name : order) {
    std::map<std::string, std::optional<double>> values[2];
    std::vector<std::string> metric_order;
    for (int i = 0; i < 2; ++i) {
      auto it = stages[i].find(name);
      if (it == stages[i].end()) continue;
      for (const auto& m : it->second->metrics()) {
        if (!values[0].count(m.name()) && !values[1].count(m.name())) {
          metric_order.push_back(m.name());
        }
        values[i][m.name()] = m.value();
      }
    }
    for (const auto& m : metric_order) {
      if (!Wanted(options.metrics, name, m)) continue;
      std::optional<double> a = values[0].count(m) ? values[0][m] : std::nullopt;
      std::optional<double> b = values[1].count(m) ? values[1][m] : std::nullopt;
      metrics.AddRow(
          {StrCat(name, ".", m), a ? Number(*a) : "-", b ? Number(*b) : "-", CompareRatio(a, b)});
    }
  }
  if (metrics.rows() > 0) {
    ctx.out() << "\nmetrics:\n";
    metrics.Render(ctx.out());
  }
  RenderGpuComparison(ctx.out(), runs[0], runs[1], order);
  return kExitOk;
}

}  // namespace longhaul::cli

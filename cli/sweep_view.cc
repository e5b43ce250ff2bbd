// `show RUN --sweep STAGE`: a foreach stage's items as one table (docs/cli.md, "show").
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/show_summary.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"
#include "daemon/workflow/sweep_items.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

const std::vector<std::string> kSweepSortKeys = {"item",  "status", "final",    "best",
                                                 "steps", "wall",   "gpu-hours"};

// One item's row: its stage and the history of the judged metric.
struct SweepRow {
  const workflow::SweepItem* item = nullptr;
  const v1::Stage* stage = nullptr;  // null: not in the run (an older file's item)
  size_t order = 0;
  std::optional<double> final_value, best;
  std::optional<int64_t> steps;  // the largest step reported
};

// Every value of `metric` that stage `stage` reported, in order, into `row`.
Status ReadSweepMetric(CommandContext& ctx, int64_t run_id, const std::string& stage,
                       const std::string& metric, bool maximize, SweepRow* row) {
  v1::ListMetricsRequest req;
  req.set_run_id(run_id);
  req.set_stage(stage);
  req.set_limit(10'000);
  for (;;) {
    ASSIGN_OR_RETURN(v1::ListMetricsResponse page, ctx.coordinator->ListMetrics(req));
    for (const v1::Metric& m : page.points()) {
      if (m.name() != metric) continue;
      row->final_value = m.value();
      if (!row->best || (maximize ? m.value() > *row->best : m.value() < *row->best)) {
        row->best = m.value();
      }
      if (m.step() >= 0) row->steps = std::max(row->steps.value_or(0), m.step());
    }
    if (page.points().empty() || page.next_cursor().empty()) return OkStatus();
    req.set_after(page.next_cursor());
  }
}

// The metric the table shows: the sweep's early_stop metric, else the first its items report.
std::string SweepMetricName(const workflow::Sweep& sweep, const std::vector<SweepRow>& rows) {
  if (sweep.early_stop) return sweep.early_stop->metric;
  std::string first;
  for (const SweepRow& r : rows) {
    if (r.stage == nullptr) continue;
    for (const v1::Metric& m : r.stage->metrics()) {
      if (first.empty() || m.name() < first) first = m.name();
    }
  }
  return first;
}

std::string SweepNumber(const std::optional<double>& v) { return v ? FormatNumber(*v) : "-"; }

// Orders rows by `key`, best first for the metric's columns and most first for the others;
// rows without a value come last, in file order.
void SortSweepRows(const std::string& key, bool maximize, std::vector<SweepRow>& rows) {
  auto metric_less = [maximize](const std::optional<double>& a, const std::optional<double>& b) {
    if (a.has_value() != b.has_value()) return a.has_value();
    if (!a) return false;
    return maximize ? *a > *b : *a < *b;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const SweepRow& a, const SweepRow& b) {
    if (key == "final") return metric_less(a.final_value, b.final_value);
    if (key == "best") return metric_less(a.best, b.best);
    if (key == "steps") return a.steps.value_or(-1) > b.steps.value_or(-1);
    if (key == "status") {
      auto name = [](const SweepRow& r) {
        return r.stage ? std::string(StageStatusName(r.stage->status())) : std::string("~");
      };
      return name(a) < name(b);
    }
    if (key == "wall") {
      return (a.stage ? a.stage->wall_seconds() : -1) > (b.stage ? b.stage->wall_seconds() : -1);
    }
    if (key == "gpu-hours") {
      return (a.stage ? a.stage->gpu_hours() : -1) > (b.stage ? b.stage->gpu_hours() : -1);
    }
    if (key != "item") {  // a key of the foreach: by its value, numbers as numbers
      auto value = [&key](const SweepRow& r) {
        for (const auto& [k, v] : r.item->values) {
          if (k == key) return v;
        }
        return std::string();
      };
      std::string va = value(a), vb = value(b);
      char* end_a = nullptr;
      char* end_b = nullptr;
      double na = std::strtod(va.c_str(), &end_a), nb = std::strtod(vb.c_str(), &end_b);
      if (!va.empty() && !vb.empty() && *end_a == '\0' && *end_b == '\0') return na < nb;
      return va < vb;
    }
    return a.order < b.order;
  });
}

}  // namespace

int ShowSweep(CommandContext& ctx, const ShowOptions& options) {
  v1::GetRunRequest req;
  req.set_id(options.run_id);
  req.set_include_workflow_text(true);
  Result<v1::Run> run = ctx.coordinator->GetRun(req);
  if (!run.ok()) return ctx.Fail(run.status());
  if (Status s = FetchRemainingStages(*ctx.coordinator, &*run, false); !s.ok()) {
    return ctx.Fail(s);
  }
  Result<workflow::Sweep> sweep = workflow::ReadSweep(run->workflow_text(), options.sweep);
  if (!sweep.ok()) {
    return ctx.Fail(Annotate(sweep.status(), StrCat("run ", options.run_id, " --sweep")));
  }
  std::vector<std::string> keys;
  if (!sweep->items.empty()) {
    for (const auto& [k, v] : sweep->items.front().values) keys.push_back(k.empty() ? "value" : k);
  }
  std::vector<std::string> headers = {"ITEM"};
  for (std::string k : keys) {
    for (char& c : k) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    headers.push_back(k);
  }
  std::string sort = options.sort.empty() ? "item" : options.sort;
  if (std::find(kSweepSortKeys.begin(), kSweepSortKeys.end(), sort) == kSweepSortKeys.end() &&
      std::find(keys.begin(), keys.end(), sort) == keys.end()) {
    std::vector<std::string> known = kSweepSortKeys;
    known.insert(known.end(), keys.begin(), keys.end());
    return ctx.Fail(absl::InvalidArgumentError(
        StrCat("--sort '", sort, "': expected one of ", StrJoin(known, ", "))));
  }
  std::map<std::string, const v1::Stage*> by_name;
  for (const v1::Stage& s : run->stages()) by_name[s.name()] = &s;
  std::vector<SweepRow> rows;
  for (const workflow::SweepItem& item : sweep->items) {
    auto it = by_name.find(item.stage);
    rows.push_back({&item, it == by_name.end() ? nullptr : it->second, rows.size(), {}, {}, {}});
  }
  std::string metric = SweepMetricName(*sweep, rows);
  bool maximize = sweep->early_stop && sweep->early_stop->maximize;
  for (SweepRow& r : rows) {
    if (r.stage == nullptr || metric.empty() || r.stage->metrics().empty()) continue;
    Status s = ReadSweepMetric(ctx, options.run_id, r.item->stage, metric, maximize, &r);
    if (!s.ok()) return ctx.Fail(s);
  }
  SortSweepRows(sort == "value" ? std::string("") : sort, maximize, rows);

  if (ctx.json) {
    nlohmann::json items = nlohmann::json::array();
    for (const SweepRow& r : rows) {
      nlohmann::json j = {{"stage", r.item->stage}};
      for (const auto& [k, v] : r.item->values) j["params"][k] = v;
      j["status"] = r.stage ? StageStatusName(r.stage->status()) : "absent";
      if (r.stage) j["reason"] = r.stage->reason();
      if (r.final_value) j["final"] = *r.final_value;
      if (r.best) j["best"] = *r.best;
      if (r.steps) j["steps"] = *r.steps;
      j["wall_seconds"] = r.stage ? r.stage->wall_seconds() : 0;
      j["gpu_hours"] = r.stage ? r.stage->gpu_hours() : 0;
      items.push_back(std::move(j));
    }
    ctx.out() << nlohmann::json{{"run", options.run_id},
                                {"sweep", options.sweep},
                                {"metric", metric},
                                {"items", items}}
                     .dump(2)
              << '\n';
    return kExitOk;
  }
  std::string what = metric.empty() ? std::string("no metric reported")
                                    : StrCat(metric, ", ", maximize ? "max" : "min", " is best");
  ctx.out() << "sweep " << TerminalSafe(options.sweep) << " of run " << options.run_id << ": "
            << rows.size() << " items (" << TerminalSafe(what) << ")\n";
  for (const char* h : {"STATUS", "FINAL", "BEST", "STEPS", "WALL", "GPU-H"}) headers.push_back(h);
  Table table(headers);
  for (size_t c = keys.size() + 2; c < headers.size(); ++c) table.AlignRight(c);
  for (const SweepRow& r : rows) {
    std::vector<std::string> cells = {r.item->stage};
    for (const auto& [k, v] : r.item->values) cells.push_back(v);
    cells.push_back(r.stage ? std::string(StageStatusLabel(r.stage->status())) : "-");
    cells.push_back(SweepNumber(r.final_value));
    cells.push_back(SweepNumber(r.best));
    cells.push_back(r.steps ? StrCat(*r.steps) : "-");
    cells.push_back(r.stage && r.stage->started_at_ms() > 0
                        ? FormatDuration(static_cast<int64_t>(r.stage->wall_seconds() * 1000))
                        : "-");
    cells.push_back(r.stage ? FormatGpuHours(r.stage->gpu_hours()) : "-");
    table.AddRow(std::move(cells));
  }
  table.Render(ctx.out());
  return kExitOk;
}

}  // namespace longhaul::cli

// `show RUN --sweep STAGE`: a foreach stage's items as one table (docs/cli.md, "show"), as
// longhauld's GetSweep answers it (the web UI's sweep page shows the same answer); here it is
// only sorted and printed.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/format.h"
#include "cli/table.h"
#include "cli/terminal_text.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {
namespace {

const std::vector<std::string> kSweepSortKeys = {"item",  "status", "final",    "best",
                                                 "steps", "wall",   "gpu-hours"};

// One item's row, with what the table sorts on.
struct SweepRow {
  const v1::SweepItem* item = nullptr;
  size_t order = 0;
  std::optional<double> final_value, best;
  std::optional<int64_t> steps;
  double wall = -1, gpu_hours = -1;  // -1: not in the run
};

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
        return r.item->absent() ? std::string("~") : std::string(StageStatusName(r.item->status()));
      };
      return name(a) < name(b);
    }
    if (key == "wall") return a.wall > b.wall;
    if (key == "gpu-hours") return a.gpu_hours > b.gpu_hours;
    if (key != "item") {  // a key of the foreach: by its value, numbers as numbers
      auto value = [&key](const SweepRow& r) {
        for (const v1::SweepParam& p : r.item->params()) {
          if (p.key() == key) return p.value();
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
  v1::GetSweepRequest req;
  req.set_run_id(options.run_id);
  req.set_stage(options.sweep);
  Result<v1::GetSweepResponse> sweep = ctx.coordinator->GetSweep(req);
  if (!sweep.ok()) return ctx.Fail(sweep.status());
  std::vector<std::string> keys;
  for (const std::string& k : sweep->keys()) keys.push_back(k.empty() ? "value" : k);
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
  std::vector<SweepRow> rows;
  for (const v1::SweepItem& item : sweep->items()) {
    SweepRow r{&item, rows.size(), {}, {}, {}};
    if (item.has_final()) r.final_value = item.final();
    if (item.has_best()) r.best = item.best();
    if (item.has_steps()) r.steps = item.steps();
    if (!item.absent()) {
      r.wall = item.wall_seconds();
      r.gpu_hours = item.gpu_hours();
    }
    rows.push_back(r);
  }
  const std::string& metric = sweep->metric();
  bool maximize = sweep->maximize();
  SortSweepRows(sort == "value" ? std::string("") : sort, maximize, rows);

  if (ctx.json) {
    nlohmann::json items = nlohmann::json::array();
    for (const SweepRow& r : rows) {
      const v1::SweepItem& item = *r.item;
      nlohmann::json j = {{"stage", item.stage()}};
      for (const v1::SweepParam& p : item.params()) j["params"][p.key()] = p.value();
      j["status"] = item.absent() ? "absent" : StageStatusName(item.status());
      if (!item.absent()) j["reason"] = item.reason();
      if (r.final_value) j["final"] = *r.final_value;
      if (r.best) j["best"] = *r.best;
      if (r.steps) j["steps"] = *r.steps;
      if (item.has_stopped_at_step()) j["stopped_at_step"] = item.stopped_at_step();
      j["wall_seconds"] = item.wall_seconds();
      j["gpu_hours"] = item.gpu_hours();
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
    const v1::SweepItem& item = *r.item;
    std::vector<std::string> cells = {item.stage()};
    for (const v1::SweepParam& p : item.params()) cells.push_back(p.value());
    cells.push_back(item.absent() ? "-" : std::string(StageStatusLabel(item.status())));
    cells.push_back(SweepNumber(r.final_value));
    cells.push_back(SweepNumber(r.best));
    cells.push_back(r.steps ? StrCat(*r.steps) : "-");
    cells.push_back(!item.absent() && item.started_at_ms() > 0
                        ? FormatDuration(static_cast<int64_t>(item.wall_seconds() * 1000))
                        : "-");
    cells.push_back(item.absent() ? "-" : FormatGpuHours(item.gpu_hours()));
    table.AddRow(std::move(cells));
  }
  table.Render(ctx.out());
  return kExitOk;
}

}  // namespace longhaul::cli

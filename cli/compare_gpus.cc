#include "cli/compare_gpus.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "cli/format.h"
#include "cli/table.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

// A figure of one run (or stage) as printed, and as the number B/A compares.
struct GpuFigure {
  std::string text = "-";
  std::optional<double> value;
};
using GpuFigureOf = std::function<GpuFigure(const v1::GpuUsage&)>;

// "25%" of the GPU time sampled, "2.5%" below 10 %.
std::string GpuIdleShare(const v1::GpuUsage& u) {
  if (u.sampled_gpu_hours() <= 0) return "";
  double pct = 100 * u.idle_gpu_hours() / u.sampled_gpu_hours();
  return StrCat(" (", FormatNumber(pct < 10 ? std::round(pct * 10) / 10 : std::round(pct)), "%)");
}

GpuFigure GpuIdleFigure(const v1::GpuUsage& u) {
  return {StrCat(FormatGpuHours(u.idle_gpu_hours()), GpuIdleShare(u)), u.idle_gpu_hours()};
}

GpuFigure GpuMeanSmFigure(const v1::GpuUsage& u) {
  if (u.mean_sm_util_pct() < 0) return {};
  return {StrCat(FormatNumber(u.mean_sm_util_pct()), "%"), u.mean_sm_util_pct()};
}

GpuFigure GpuEnergyFigure(const v1::GpuUsage& u) {
  return {FormatEnergy(u.energy_kwh()), u.energy_kwh()};
}

GpuFigure GpuPeakMemoryFigure(const v1::GpuUsage& u) {
  if (u.peak_mem_used_bytes() < 0) return {};
  std::string of = u.mem_total_bytes() > 0 ? StrCat(" of ", FormatBytes(u.mem_total_bytes())) : "";
  return {StrCat(FormatBytes(u.peak_mem_used_bytes()), of),
          static_cast<double>(u.peak_mem_used_bytes())};
}

// One row: the cells of `head`, then `figure` of a and of b ("-" for one without a GpuUsage)
// and B/A.
void AddGpuRow(Table& table, std::vector<std::string> head, const v1::GpuUsage* a,
               const v1::GpuUsage* b, const GpuFigureOf& figure) {
  GpuFigure fa = a ? figure(*a) : GpuFigure{}, fb = b ? figure(*b) : GpuFigure{};
  head.push_back(fa.text);
  head.push_back(fb.text);
  head.push_back(CompareRatio(fa.value, fb.value));
  table.AddRow(std::move(head));
}

// A run or a stage.
template <typename T>
bool HeldGpus(const T& x) {
  return x.has_gpu_usage() || x.gpu_hours() > 0;
}

// GPU-hours held (not only those sampled), "-" for one (nullptr or not) that held no GPU.
template <typename T>
void AddGpuHoursRow(Table& table, std::vector<std::string> head, const T* a, const T* b) {
  std::optional<double> hours[2];
  const T* x[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    if (x[i] != nullptr && HeldGpus(*x[i])) hours[i] = x[i]->gpu_hours();
    head.push_back(hours[i] ? FormatGpuHours(*hours[i]) : "-");
  }
  head.push_back(CompareRatio(hours[0], hours[1]));
  table.AddRow(std::move(head));
}

}  // namespace

std::string CompareRatio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *a == 0 || !std::isfinite(*a) || !std::isfinite(*b)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *b / *a);
  return buf;
}

bool RenderGpuComparison(std::ostream& out, const v1::Run& a, const v1::Run& b,
                         const std::vector<std::string>& stage_order) {
  const v1::Run* runs[2] = {&a, &b};
  std::map<std::string, const v1::Stage*> stages[2];
  bool any = false;
  for (int i = 0; i < 2; ++i) {
    any = any || HeldGpus(*runs[i]);
    for (const v1::Stage& s : runs[i]->stages()) {
      stages[i][s.name()] = &s;
      any = any || HeldGpus(s);
    }
  }
  if (!any) return false;
  std::string ha = StrCat("run ", a.id()), hb = StrCat("run ", b.id());
  auto usage = [](const auto& m) { return m.has_gpu_usage() ? &m.gpu_usage() : nullptr; };

  Table whole({"GPUS", ha, hb, "B/A"});
  for (size_t c = 1; c <= 3; ++c) whole.AlignRight(c);
  AddGpuHoursRow(whole, {"GPU-hours"}, runs[0], runs[1]);
  AddGpuRow(whole, {"idle GPU-hours"}, usage(a), usage(b), GpuIdleFigure);
  AddGpuRow(whole, {"mean SM"}, usage(a), usage(b), GpuMeanSmFigure);
  AddGpuRow(whole, {"energy"}, usage(a), usage(b), GpuEnergyFigure);
  out << "\ngpus:\n";
  whole.Render(out);

  Table by_stage({"STAGE", "GPU USE", ha, hb, "B/A"});
  for (size_t c = 2; c <= 4; ++c) by_stage.AlignRight(c);
  for (const std::string& name : stage_order) {
    const v1::Stage* s[2];
    for (int i = 0; i < 2; ++i) {
      auto it = stages[i].find(name);
      s[i] = it == stages[i].end() ? nullptr : it->second;
    }
    if (!(s[0] && HeldGpus(*s[0])) && !(s[1] && HeldGpus(*s[1]))) continue;
    AddGpuHoursRow(by_stage, {name, "GPU-hours"}, s[0], s[1]);
    const v1::GpuUsage* ua = s[0] ? usage(*s[0]) : nullptr;
    const v1::GpuUsage* ub = s[1] ? usage(*s[1]) : nullptr;
    if (ua == nullptr && ub == nullptr) continue;  // no telemetry: GPU-hours only
    AddGpuRow(by_stage, {name, "mean SM"}, ua, ub, GpuMeanSmFigure);
    AddGpuRow(by_stage, {name, "peak memory"}, ua, ub, GpuPeakMemoryFigure);
    AddGpuRow(by_stage, {name, "energy"}, ua, ub, GpuEnergyFigure);
    AddGpuRow(by_stage, {name, "idle GPU-hours"}, ua, ub, GpuIdleFigure);
  }
  if (by_stage.rows() > 0) {
    out << "\ngpus by stage:\n";
    by_stage.Render(out);
  }
  return true;
}

}  // namespace longhaul::cli

#include "daemon/scheduler/gpu_series.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace longhaul::scheduler {
namespace {

// The time-weighted mean of two known values (-1 when neither is).
double WeightedMean(double a, int64_t wa, double b, int64_t wb) {
  if (a < 0) return b;
  if (b < 0) return a;
  double w1 = std::max<int64_t>(wa, 1), w2 = std::max<int64_t>(wb, 1);
  return (a * w1 + b * w2) / (w1 + w2);
}

GpuPoint Merge(const GpuPoint& a, const GpuPoint& b) {
  GpuPoint m;
  m.t_ms = a.t_ms;
  m.span_ms = a.span_ms + b.span_ms;
  m.sm_util = WeightedMean(a.sm_util, a.span_ms, b.sm_util, b.span_ms);
  m.mem_util = WeightedMean(a.mem_util, a.span_ms, b.mem_util, b.span_ms);
  m.mem_used_max = std::max(a.mem_used_max, b.mem_used_max);
  m.mem_total = std::max(a.mem_total, b.mem_total);
  m.power_w = WeightedMean(a.power_w, a.span_ms, b.power_w, b.span_ms);
  m.temp_max = std::max(a.temp_max, b.temp_max);
  m.idle_ms = a.idle_ms + b.idle_ms;
  return m;
}

}  // namespace

void GpuSeries::Add(const v1::GpuReading& r, int64_t span_ms) {
  GpuPoint p;
  p.span_ms = std::max<int64_t>(0, span_ms);
  p.t_ms = r.ts_ms() - p.span_ms;
  if (r.has_sm_util_pct()) p.sm_util = r.sm_util_pct();
  if (r.has_mem_util_pct()) p.mem_util = r.mem_util_pct();
  if (r.has_mem_used_bytes()) p.mem_used_max = r.mem_used_bytes();
  if (r.has_mem_total_bytes()) p.mem_total = r.mem_total_bytes();
  if (r.has_power_watts()) p.power_w = r.power_watts();
  if (r.has_temperature_c()) p.temp_max = r.temperature_c();
  if (p.sm_util >= 0 && p.sm_util < kIdleBelowPct) p.idle_ms = static_cast<double>(p.span_ms);
  last_ts_ms_ = r.ts_ms();
  if (head_.size() < kHead) {
    head_.push_back(p);
    return;
  }
  tail_.push_back(p);
  if (tail_.size() <= kTail) return;
  // Halve the resolution: merge adjacent pairs (an odd last point stays as it is).
  std::vector<GpuPoint> merged;
  merged.reserve(tail_.size() / 2 + 1);
  for (size_t i = 0; i + 1 < tail_.size(); i += 2) merged.push_back(Merge(tail_[i], tail_[i + 1]));
  if (tail_.size() % 2 == 1) merged.push_back(tail_.back());
  tail_ = std::move(merged);
}

std::vector<GpuPoint> GpuSeries::Points() const {
  std::vector<GpuPoint> all = head_;
  all.insert(all.end(), tail_.begin(), tail_.end());
  return all;
}

GpuSummary GpuSeries::Summarize() const {
  GpuSummary s;
  double util_ms = 0, util_weight = 0;
  for (const std::vector<GpuPoint>* part : {&head_, &tail_}) {
    for (const GpuPoint& p : *part) {
      s.sampled_ms += p.span_ms;
      if (p.sm_util >= 0) {
        double w = static_cast<double>(std::max<int64_t>(p.span_ms, 1));
        util_ms += p.sm_util * w;
        util_weight += w;
      }
      s.peak_mem_used = std::max(s.peak_mem_used, p.mem_used_max);
      s.mem_total = std::max(s.mem_total, p.mem_total);
      if (p.power_w >= 0) s.energy_wh += p.power_w * static_cast<double>(p.span_ms) / 3.6e6;
      s.idle_ms += static_cast<int64_t>(p.idle_ms);
    }
  }
  if (util_weight > 0) s.mean_sm_util = util_ms / util_weight;
  return s;
}

GpuSummary CombineSummaries(const std::vector<GpuSummary>& each) {
  GpuSummary all;
  double util_ms = 0, util_weight = 0;
  for (const GpuSummary& s : each) {
    all.sampled_ms += s.sampled_ms;
    all.energy_wh += s.energy_wh;
    all.idle_ms += s.idle_ms;
    all.peak_mem_used = std::max(all.peak_mem_used, s.peak_mem_used);
    all.mem_total = std::max(all.mem_total, s.mem_total);
    if (s.mean_sm_util >= 0) {
      double w = static_cast<double>(std::max<int64_t>(s.sampled_ms, 1));
      util_ms += s.mean_sm_util * w;
      util_weight += w;
    }
  }
  if (util_weight > 0) all.mean_sm_util = util_ms / util_weight;
  return all;
}

// JSON: {"v":1,"last":ms,"head":[[t,span,sm,mem,used,total,power,temp,idle],...],"tail":[...]}
std::string GpuSeries::ToJson() const {
  auto points = [](const std::vector<GpuPoint>& ps) {
    nlohmann::json a = nlohmann::json::array();
    for (const GpuPoint& p : ps) {
      a.push_back({p.t_ms, p.span_ms, p.sm_util, p.mem_util, p.mem_used_max, p.mem_total,
                   p.power_w, p.temp_max, p.idle_ms});
    }
    return a;
  };
  nlohmann::json j = {{"v", 1}, {"last", last_ts_ms_}, {"head", points(head_)},
                      {"tail", points(tail_)}};
  return j.dump();
}

Result<GpuSeries> GpuSeries::FromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("v", 0) != 1) {
    return absl::InvalidArgumentError("GPU series: not a version-1 series object");
  }
  GpuSeries s;
  s.last_ts_ms_ = j.value("last", int64_t{0});
  for (auto [key, out] : {std::pair{"head", &s.head_}, std::pair{"tail", &s.tail_}}) {
    if (!j.contains(key) || !j[key].is_array()) {
      return absl::InvalidArgumentError(std::string("GPU series: no array '") + key + "'");
    }
    for (const nlohmann::json& a : j[key]) {
      if (!a.is_array() || a.size() != 9 ||
          !std::all_of(a.begin(), a.end(), [](const nlohmann::json& e) { return e.is_number(); })) {
        return absl::InvalidArgumentError(std::string("GPU series: a point of '") + key +
                                          "' is not an array of 9 numbers");
      }
      GpuPoint p;
      p.t_ms = a[0].get<int64_t>();
      p.span_ms = a[1].get<int64_t>();
      p.sm_util = a[2].get<double>();
      p.mem_util = a[3].get<double>();
      p.mem_used_max = a[4].get<int64_t>();
      p.mem_total = a[5].get<int64_t>();
      p.power_w = a[6].get<double>();
      p.temp_max = a[7].get<double>();
      p.idle_ms = a[8].get<double>();
      out->push_back(p);
    }
  }
  return s;
}

}  // namespace longhaul::scheduler

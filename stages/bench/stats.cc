#include "stages/bench/stats.h"

#include <algorithm>
#include <cmath>

namespace longhaul::stages {
namespace {

double Quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

Summary Summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = values.size();
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.min = values.front();
  s.max = values.back();
  s.p50 = Quantile(values, 0.50);
  s.p90 = Quantile(values, 0.90);
  s.p99 = Quantile(values, 0.99);
  return s;
}

Summary SummarizeWeighted(std::vector<std::pair<double, double>> samples) {
  Summary s;
  samples.erase(
      std::remove_if(samples.begin(), samples.end(), [](const auto& p) { return !(p.second > 0); }),
      samples.end());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  double total = 0, sum = 0;
  for (const auto& [v, w] : samples) {
    total += w;
    sum += v * w;
  }
  s.count = samples.size();
  s.mean = sum / total;
  s.min = samples.front().first;
  s.max = samples.back().first;
  auto at = [&](double q) {
    double target = q * total, acc = 0;
    for (const auto& [v, w] : samples) {
      acc += w;
      if (acc >= target) return v;
    }
    return samples.back().first;
  };
  s.p50 = at(0.50);
  s.p90 = at(0.90);
  s.p99 = at(0.99);
  return s;
}

nlohmann::json SummaryToJson(const Summary& s) {
  if (s.count == 0) {
    return {{"count", 0},     {"mean", nullptr}, {"min", nullptr}, {"max", nullptr},
            {"p50", nullptr}, {"p90", nullptr},  {"p99", nullptr}};
  }
  return {{"count", s.count}, {"mean", s.mean}, {"min", s.min}, {"max", s.max},
          {"p50", s.p50},     {"p90", s.p90},   {"p99", s.p99}};
}

}  // namespace longhaul::stages

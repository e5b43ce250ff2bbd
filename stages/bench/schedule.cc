#include "stages/bench/schedule.h"

#include <cmath>
#include <random>

namespace longhaul::stages {

std::vector<int64_t> PlanSendTimes(const ScheduleSpec& spec) {
  std::vector<int64_t> out;
  const double gap_ns = 1e9 / spec.rate;
  const double limit_ns = spec.duration_s ? *spec.duration_s * 1e9 : INFINITY;
  const int64_t max_count = spec.count ? *spec.count : INT64_MAX;
  std::mt19937_64 rng(spec.seed);
  std::exponential_distribution<double> exp(1.0);
  double t = 0;
  for (int64_t i = 0; i < max_count; ++i) {
    if (!spec.poisson) t = static_cast<double>(i) * gap_ns;
    if (t >= limit_ns) break;
    out.push_back(static_cast<int64_t>(std::llround(t)));
    if (spec.poisson) t += exp(rng) * gap_ns;
  }
  return out;
}

}  // namespace longhaul::stages

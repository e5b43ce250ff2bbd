// Open-loop send schedules, computed before the run starts so that a slow response can never
// delay a later send (the fault of closed-loop Python clients, docs/engines.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace longhaul::stages {

struct ScheduleSpec {
  double rate = 1;                   // requests per second
  bool poisson = false;              // exponential gaps; uniform (1/rate) otherwise
  std::optional<int64_t> count;      // this many sends ...
  std::optional<double> duration_s;  // ... or every send before this time
  uint64_t seed = 0;
};

// Send times in ns from the start of the run. The first send is at 0; uniform gaps are
// exact multiples of 1/rate (no accumulated rounding); Poisson gaps are exponential draws
// from a generator seeded with `seed`, so a run can be repeated exactly.
std::vector<int64_t> PlanSendTimes(const ScheduleSpec& spec);

}  // namespace longhaul::stages

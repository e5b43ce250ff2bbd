// Summary statistics for the benchmark's figures.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace longhaul::stages {

struct Summary {
  size_t count = 0;
  double mean = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0;
};

// Percentiles by linear interpolation between closest ranks (numpy's default), so results
// compare with vLLM's and SGLang's benchmark scripts. Empty input gives count 0, zeros.
Summary Summarize(std::vector<double> values);

// The same over weighted samples (value, weight): the per-token ITL, where one chunk's gap
// stands for every token the chunk carried. Percentiles by cumulative weight.
Summary SummarizeWeighted(std::vector<std::pair<double, double>> samples);

// {"count", "mean", "min", "max", "p50", "p90", "p99"}; null figures when count is 0.
nlohmann::json SummaryToJson(const Summary& s);

}  // namespace longhaul::stages

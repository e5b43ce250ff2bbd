// The GPU part of `longhaul compare` (docs/cli.md, "compare"): what the GPUs of two runs did,
// side by side with the ratio B/A, from each run's and each stage's GpuUsage (docs/gpus.md,
// "Telemetry per attempt").
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

// "1.59x" for B relative to A, when both are known finite numbers and A is not zero; else "".
std::string CompareRatio(const std::optional<double>& a, const std::optional<double>& b);

// Writes, after a blank line, the runs' GPU use (GPU-hours, idle GPU-hours with their share of
// the GPU time sampled, mean SM utilisation, energy) and then, for each stage of `stage_order`
// that held a GPU in either run, its GPU-hours and, when either run sampled its GPUs, its mean
// SM utilisation, peak memory of the total, energy and idle GPU-hours. A figure a run has not
// got (no GPU held, no telemetry) is "-". Writes nothing and returns false when neither run
// held a GPU.
bool RenderGpuComparison(std::ostream& out, const v1::Run& a, const v1::Run& b,
                         const std::vector<std::string>& stage_order);

}  // namespace longhaul::cli

// lh-gpucheck's run: load the CUDA driver, check each GPU (memory patterns, a compute burn
// whose results are checked, peer copies between GPUs), report through the stage protocol and
// one summary line per GPU on stdout, and choose the exit code (docs/gpus.md, "Pre-flight:
// lh-gpucheck").
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/event_writer.h"
#include "stages/gpucheck/gpu_checks.h"

namespace longhaul::gpucheck {

// Exit codes.
inline constexpr int kExitAllPassed = 0;
inline constexpr int kExitGpuFailed = 1;  // a GPU failed a check; stderr names GPU and check
inline constexpr int kExitBadInput = 2;   // bad flags, a GPU not visible, an unwritable report
inline constexpr int kExitNoDriver = 3;   // libcuda does not load, cuInit fails, or no GPU

struct GpucheckOptions {
  std::string cuda_library = "libcuda.so.1";
  std::vector<int> gpus;  // CUDA ordinals; empty: every GPU the driver lists
  MemoryCheckOptions memory;
  BurnCheckOptions burn;
  bool p2p = true;  // with two GPUs or more
  P2pCheckOptions p2p_options;
  std::string report_path;  // "": no JSON report
};

// What --quick sets, for each of these options the command line leaves unset: the
// return-to-service check, a few seconds per GPU.
struct QuickDefaults {
  double memory_fraction = 0.01;
  std::vector<Pattern> patterns = {Pattern::kWalkingOnes, Pattern::kAddress, Pattern::kRandom};
  double burn_seconds = 2;
  uint64_t p2p_bytes = 64ull << 20;
};

int RunGpucheck(const GpucheckOptions& options, EventWriter& events, std::ostream& out,
                std::ostream& err);

}  // namespace longhaul::gpucheck

// lh-gpucheck's three checks (docs/gpus.md, "Pre-flight: lh-gpucheck"). Each returns a non-OK
// Status when a CUDA call fails (the GPU fails the check with that error) and reports wrong
// data in its result (the GPU fails the check with the first wrong words).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/status.h"
#include "stages/gpucheck/cuda_driver.h"
#include "stages/gpucheck/gpu_device.h"
#include "stages/gpucheck/patterns.h"

namespace longhaul::gpucheck {

// 1. Memory: a buffer of `fraction` of the GPU's free memory, each pattern written over all of
// it and then read back.
struct MemoryCheckOptions {
  double fraction = 0.1;
  std::vector<Pattern> patterns;
  uint64_t seed = 1;
  uint64_t chunk_bytes = 64ull << 20;  // host staging per transfer
};
struct MemoryCheckResult {
  uint64_t bytes_tested = 0;
  uint64_t errors = 0;                       // wrong words, all patterns
  Pattern failed_pattern = Pattern::kZeros;  // the first pattern with errors
  MismatchSummary first_failed;              // its mismatches
  double seconds = 0;
};
Status RunMemoryCheck(const CudaDriver& driver, const GpuHandle& gpu,
                      const MemoryCheckOptions& options, MemoryCheckResult& result,
                      const std::function<void(Pattern)>& pattern_done);

// 2. Compute burn: the FMA kernel (burn_kernel.h) launched again and again, each result checked
// bit for bit against the host's reference.
struct BurnCheckOptions {
  double seconds = 10;   // launch until this much time has passed (at least one launch) ...
  int64_t launches = 0;  // ... or exactly this many launches, when > 0
  uint32_t threads = 1u << 20;
  uint32_t rounds = 8192;  // 8 FMAs each
};
struct BurnCheckResult {
  int64_t launches = 0;
  double kernel_seconds = 0;  // launch to synchronize, summed (result checks excluded)
  double gflops = 0;          // 2 * FMAs / kernel_seconds / 1e9
  double launches_per_s = 0;
  uint64_t wrong = 0;  // wrong results in the first launch that had any (the burn stops there)
  uint32_t first_wrong_thread = 0;
  float expected = 0, got = 0;
};
// `reference` is BurnReference(options.rounds).
Status RunBurnCheck(const CudaDriver& driver, const GpuHandle& gpu, const BurnCheckOptions& options,
                    const std::vector<float>& reference, BurnCheckResult& result);

// 3. Peer copy from `src` to `dst`: peer access as the driver reports it, timed cuMemcpyPeer
// copies of a random buffer, and the copy read back and checked.
struct P2pCheckOptions {
  uint64_t bytes = 256ull << 20;
  int copies = 5;  // timed
  uint64_t seed = 1;
  uint64_t chunk_bytes = 64ull << 20;
};
struct P2pCheckResult {
  bool peer_access = false;  // cuDeviceCanAccessPeer(src, dst); nothing else runs without it
  double gbps = 0;           // bytes * copies / seconds / 1e9
  MismatchSummary mismatches;
};
Status RunP2pCheck(const CudaDriver& driver, const GpuHandle& src, const GpuHandle& dst,
                   const P2pCheckOptions& options, P2pCheckResult& result);

}  // namespace longhaul::gpucheck

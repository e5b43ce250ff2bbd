// The compute burn's kernel: hand-written PTX, loaded with cuModuleLoadData (the driver JITs
// it for the GPU at hand), and the host's reference for its results.
//
// lh_gpucheck_fma(float* out, u32 n, u32 rounds, float a, float b): thread i (< n) starts from
// x = (i % 1024) / 1024, applies x = fma(x, a, b) 8 * rounds times (fma.rn.f32: one rounding,
// as std::fmaf), and stores x in out[i]. The result is exact, so the host compares bit for bit.
// 8 * rounds FMAs = 16 * rounds floating-point operations per thread.
//
// The fake libcuda of the tests knows this kernel by its name and this parameter list, and runs
// it on the CPU; it does not read the PTX (tests/stages/fake_cuda/fake_cuda_state.h).
#pragma once

#include <cstdint>
#include <vector>

namespace longhaul::gpucheck {

inline constexpr char kBurnKernelName[] = "lh_gpucheck_fma";
inline constexpr int kBurnFmasPerRound = 8;
inline constexpr uint32_t kBurnDistinctStarts = 1024;  // thread i starts from i % 1024
// a < 1: x converges to b / (1 - a) = 1 and stays in [0, 1] (no overflow, no denormals).
inline constexpr float kBurnA = 0.999f;
inline constexpr float kBurnB = 0.001f;

// The PTX text (NUL-terminated, as cuModuleLoadData takes it).
const char* BurnKernelPtx();

// The kernel's result for each start value: element s is what every thread with
// i % 1024 == s stores.
std::vector<float> BurnReference(uint32_t rounds);

}  // namespace longhaul::gpucheck

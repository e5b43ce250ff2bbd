// The fake CUDA driver (fake_cuda.cc and fake_cuda_memory.cc build libcuda-fake.so) and the
// state file that drives it, for lh-gpucheck's tests: the binary loads it with --cuda-library
// PATH through the same dlopen path as libcuda.so.1, so the tests run every driver call
// without a GPU.
//
// The contract of the fake:
// - It exports the driver entry points lh-gpucheck resolves (stages/gpucheck/cuda_driver.h),
//   by their dlsym names (cuMemAlloc_v2, cuCtxCreate_v2, ...).
// - cuInit reads the JSON file named by $LONGHAUL_FAKE_CUDA_STATE (written by
//   WriteFakeCudaState below); a missing or bad file makes cuInit fail with
//   CUDA_ERROR_NOT_INITIALIZED. $CUDA_VISIBLE_DEVICES selects and renumbers the GPUs as the
//   real driver does (a comma-separated list of indices into the file's "gpus"; "" hides all).
// - Device memory is host memory (malloc) per allocation; a GPU's addresses start at
//   (index + 1) << 40 and are handed out in order, never reused, so the first allocation of a
//   context starts at offset 0 of its GPU. cuMemGetInfo_v2 reports memory_bytes minus what is
//   allocated.
// - A stuck bit is at a byte offset of a GPU's memory: every read of that byte (device to
//   host, device to device, peer copies) returns the bit at its stuck value.
// - It does not interpret PTX. cuModuleLoadData keeps the text; cuModuleGetFunction finds
//   ".entry NAME" in it and knows only lh_gpucheck_fma (stages/gpucheck/burn_kernel.h), which
//   cuLaunchKernel runs on the CPU with that kernel's parameter list. "wrong_kernel_result"
//   flips the lowest bit of thread 7's result (thread n - 1 when n <= 7).
// - "peer_access": false makes cuDeviceCanAccessPeer answer 0 for every pair with that GPU and
//   cuCtxEnablePeerAccess fail; cuMemcpyPeer still copies (the real driver stages through the
//   host).
// - "launch_error": a CUresult every cuLaunchKernel on that GPU returns (e.g. 214,
//   CUDA_ERROR_ECC_UNCORRECTABLE).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace longhaul::testing {

struct FakeCudaStuckBit {
  uint64_t offset = 0;  // byte offset in the GPU's memory
  int bit = 0;          // 0..7 within that byte
  int value = 1;
};

struct FakeCudaGpu {
  std::string name = "NVIDIA H200";
  std::string uuid;  // GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  uint64_t memory_bytes = 256ull << 20;
  std::vector<FakeCudaStuckBit> stuck_bits;
  bool wrong_kernel_result = false;
  bool peer_access = true;
  int launch_error = 0;
};

// `n` healthy GPUs with uuids GPU-00000000-0000-0000-0000-00000000000N.
inline std::vector<FakeCudaGpu> FakeCudaGpus(int n) {
  std::vector<FakeCudaGpu> gpus(n);
  for (int i = 0; i < n; ++i) {
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-00000000-0000-0000-0000-%012x", i);
    gpus[i].uuid = uuid;
  }
  return gpus;
}

// Replaces `path` (write and rename) with `gpus`. `init_error`: what cuInit returns.
inline void WriteFakeCudaState(const std::string& path, const std::vector<FakeCudaGpu>& gpus,
                               int init_error = 0) {
  nlohmann::json root = {{"init_error", init_error}, {"gpus", nlohmann::json::array()}};
  for (const FakeCudaGpu& g : gpus) {
    nlohmann::json stuck = nlohmann::json::array();
    for (const FakeCudaStuckBit& s : g.stuck_bits) {
      stuck.push_back({{"offset", s.offset}, {"bit", s.bit}, {"value", s.value}});
    }
    root["gpus"].push_back({{"name", g.name},
                            {"uuid", g.uuid},
                            {"memory_bytes", g.memory_bytes},
                            {"stuck_bits", stuck},
                            {"wrong_kernel_result", g.wrong_kernel_result},
                            {"peer_access", g.peer_access},
                            {"launch_error", g.launch_error}});
  }
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << root.dump();
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace longhaul::testing

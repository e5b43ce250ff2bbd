// Shared by the fake CUDA driver's files (fake_cuda.cc: state, devices, contexts, errors;
// fake_cuda_memory.cc: memory, copies, modules, launches). The contract is in
// fake_cuda_state.h.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

extern "C" {
struct CUctx_st {
  int gpu;
  std::set<int> peers;  // GPUs whose memory this context may access
};
struct CUmod_st {
  std::string image;
};
struct CUfunc_st {
  std::string name;
};
struct CUstream_st;
struct CUuuid_st {  // as cuda.h and stages/gpucheck/cuda_driver.h declare it
  char bytes[16];
};
}

namespace fake_cuda {

using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult kOk = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotInitialized = 3,
                   kInvalidDevice = 101, kInvalidImage = 200, kInvalidContext = 201,
                   kPeerUnsupported = 217, kNotFound = 500, kPeerAlreadyEnabled = 704,
                   kIllegalAddress = 700;

struct FakeCudaStuck {
  uint64_t offset;
  int bit;
  int value;
};

struct FakeCudaDevice {
  std::string name;
  unsigned char uuid[16] = {};
  uint64_t memory_bytes = 0;
  uint64_t used = 0;
  uint64_t next_offset = 0;
  std::vector<FakeCudaStuck> stuck;
  bool wrong_kernel_result = false;
  bool peer_access = true;
  CUresult launch_error = kOk;
};

struct FakeCudaAlloc {
  int gpu;
  uint64_t offset;  // in the GPU's memory
  std::vector<unsigned char> bytes;
};

struct FakeCuda {
  std::mutex mu;
  bool initialized = false;
  std::vector<FakeCudaDevice> gpus;
  std::map<CUdeviceptr, FakeCudaAlloc> allocs;  // by start address
  std::set<CUctx_st*> contexts;
};

// The fake's one state, created on first use, destroyed when the library is unloaded.
FakeCuda& Fake();
// The calling thread's current context (cuCtxSetCurrent).
extern thread_local CUctx_st* current_context;

// Where GPU `gpu`'s device addresses start.
constexpr CUdeviceptr GpuBase(int gpu) { return CUdeviceptr(gpu + 1) << 40; }

// The checks of a call that needs an initialized driver and a current context. Caller holds mu.
CUresult NeedContext(FakeCuda& f);

}  // namespace fake_cuda

#define FAKE_CUDA_EXPORT extern "C" __attribute__((visibility("default")))
#define FAKE_CUDA_LOCK                        \
  fake_cuda::FakeCuda& f = fake_cuda::Fake(); \
  std::lock_guard<std::mutex> lock(f.mu)

// The fake CUDA driver's memory, copies, modules and launches (fake_cuda_state.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "stages/gpucheck/burn_kernel.h"
#include "tests/stages/fake_cuda/fake_cuda_internal.h"

namespace fake_cuda {
namespace {

// The allocation holding [ptr, ptr + bytes), and where in it ptr is; nullptr if none holds it.
FakeCudaAlloc* FindAlloc(FakeCuda& f, CUdeviceptr ptr, size_t bytes, uint64_t* at) {
  auto it = f.allocs.upper_bound(ptr);
  if (it == f.allocs.begin()) return nullptr;
  --it;
  if (ptr + bytes > it->first + it->second.bytes.size()) return nullptr;
  *at = ptr - it->first;
  return &it->second;
}

unsigned char* DevicePointer(FakeCuda& f, CUdeviceptr ptr, size_t bytes) {
  uint64_t at = 0;
  FakeCudaAlloc* a = FindAlloc(f, ptr, bytes, &at);
  return a == nullptr ? nullptr : a->bytes.data() + at;
}

// Copies device memory out, with the GPU's stuck bits applied. Caller holds mu.
CUresult ReadDevice(FakeCuda& f, void* dst, CUdeviceptr src, size_t bytes) {
  uint64_t at = 0;
  FakeCudaAlloc* a = FindAlloc(f, src, bytes, &at);
  if (a == nullptr) return kInvalidValue;
  std::memcpy(dst, a->bytes.data() + at, bytes);
  const uint64_t start = a->offset + at;
  for (const FakeCudaStuck& s : f.gpus[a->gpu].stuck) {
    if (s.offset < start || s.offset >= start + bytes) continue;
    unsigned char& byte = static_cast<unsigned char*>(dst)[s.offset - start];
    byte = s.value ? byte | (1u << s.bit) : byte & ~(1u << s.bit);
  }
  return kOk;
}

// Thread i's result of lh_gpucheck_fma, computed as the kernel's PTX does.
float FakeCudaFma(uint32_t i, uint32_t rounds, float a, float b) {
  float x = static_cast<float>(i & 1023) * 0x1p-10f;
  for (uint32_t r = 0; r < rounds; ++r) {
    for (int k = 0; k < 8; ++k) x = std::fmaf(x, a, b);
  }
  return x;
}

}  // namespace
}  // namespace fake_cuda

using namespace fake_cuda;

FAKE_CUDA_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  const FakeCudaDevice& gpu = f.gpus[current_context->gpu];
  *free_bytes = gpu.memory_bytes - gpu.used;
  *total = gpu.memory_bytes;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  if (bytes == 0) return kInvalidValue;
  int g = current_context->gpu;
  FakeCudaDevice& gpu = f.gpus[g];
  if (gpu.used + bytes > gpu.memory_bytes) return kOutOfMemory;
  *ptr = GpuBase(g) + gpu.next_offset;
  f.allocs[*ptr] = FakeCudaAlloc{g, gpu.next_offset, std::vector<unsigned char>(bytes)};
  gpu.used += bytes;
  gpu.next_offset += (bytes + 255) / 256 * 256;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) {
  FAKE_CUDA_LOCK;
  auto it = f.allocs.find(ptr);
  if (it == f.allocs.end()) return kInvalidValue;
  f.gpus[it->second.gpu].used -= it->second.bytes.size();
  f.allocs.erase(it);
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  unsigned char* to = DevicePointer(f, dst, bytes);
  if (to == nullptr) return kInvalidValue;
  std::memcpy(to, src, bytes);
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  return ReadDevice(f, dst, src, bytes);
}

FAKE_CUDA_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t words) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  unsigned char* to = DevicePointer(f, dst, words * 4);
  if (to == nullptr) return kInvalidValue;
  for (size_t i = 0; i < words; ++i) std::memcpy(to + i * 4, &value, 4);
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUctx_st* dst_ctx, CUdeviceptr src,
                                       CUctx_st* src_ctx, size_t bytes) {
  FAKE_CUDA_LOCK;
  if (!f.initialized) return kNotInitialized;
  if (f.contexts.count(dst_ctx) == 0 || f.contexts.count(src_ctx) == 0) return kInvalidContext;
  unsigned char* to = DevicePointer(f, dst, bytes);
  if (to == nullptr) return kInvalidValue;
  return ReadDevice(f, to, src, bytes);
}

FAKE_CUDA_EXPORT CUresult cuModuleLoadData(CUmod_st** module, const void* image) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  std::string text = static_cast<const char*>(image);
  if (text.find(".entry") == std::string::npos) return kInvalidImage;
  *module = new CUmod_st{std::move(text)};
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuModuleUnload(CUmod_st* module) {
  delete module;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuModuleGetFunction(CUfunc_st** function, CUmod_st* module,
                                              const char* name) {
  static CUfunc_st burn{longhaul::gpucheck::kBurnKernelName};
  if (module == nullptr || name == nullptr) return kInvalidValue;
  if (module->image.find(std::string(".entry ") + name + "(") == std::string::npos ||
      burn.name != name) {
    return kNotFound;
  }
  *function = &burn;
  return kOk;
}

// Runs lh_gpucheck_fma(u64 out, u32 n, u32 rounds, f32 a, f32 b) on the CPU.
FAKE_CUDA_EXPORT CUresult cuLaunchKernel(CUfunc_st* function, unsigned int grid_x,
                                         unsigned int grid_y, unsigned int grid_z,
                                         unsigned int block_x, unsigned int block_y,
                                         unsigned int block_z, unsigned int, CUstream_st*,
                                         void** params, void**) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  if (function == nullptr || params == nullptr) return kInvalidValue;
  const FakeCudaDevice& gpu = f.gpus[current_context->gpu];
  if (gpu.launch_error != kOk) return gpu.launch_error;
  CUdeviceptr out = *static_cast<CUdeviceptr*>(params[0]);
  uint32_t n = *static_cast<uint32_t*>(params[1]);
  uint32_t rounds = *static_cast<uint32_t*>(params[2]);
  float a = *static_cast<float*>(params[3]);
  float b = *static_cast<float*>(params[4]);
  uint64_t threads = uint64_t{grid_x} * grid_y * grid_z * block_x * block_y * block_z;
  uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(n, threads));
  unsigned char* to = DevicePointer(f, out, uint64_t{count} * 4);
  if (to == nullptr) return kIllegalAddress;
  for (uint32_t i = 0; i < count; ++i) {
    float x = FakeCudaFma(i, rounds, a, b);
    std::memcpy(to + uint64_t{i} * 4, &x, 4);
  }
  if (gpu.wrong_kernel_result && count > 0) to[uint64_t{std::min<uint32_t>(7, count - 1)} * 4] ^= 1;
  return kOk;
}

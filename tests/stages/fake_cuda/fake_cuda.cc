// libcuda-fake.so: a stand-in for libcuda.so.1 exporting the driver entry points lh-gpucheck
// calls, over host memory and a JSON state file. Its contract (what it fakes, how faults are
// given) is in fake_cuda_state.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "stages/gpucheck/burn_kernel.h"

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
}

namespace {

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

FakeCuda& Fake() {
  static FakeCuda* fake = new FakeCuda;
  return *fake;
}

thread_local CUctx_st* fake_cuda_current = nullptr;

constexpr CUdeviceptr GpuBase(int gpu) { return CUdeviceptr(gpu + 1) << 40; }

void ParseUuid(const std::string& text, unsigned char* out) {
  int n = 0;
  for (size_t i = 0; i < text.size() && n < 32; ++i) {
    char c = text[i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;  // "GPU-" and the dashes
    out[n / 2] = static_cast<unsigned char>(out[n / 2] << 4 | v);
    ++n;
  }
}

// Reads the state file and CUDA_VISIBLE_DEVICES. Caller holds mu.
bool LoadState(FakeCuda& f, CUresult& init_error) {
  const char* path = std::getenv("LONGHAUL_FAKE_CUDA_STATE");
  if (path == nullptr) return false;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json root = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return false;
  init_error = root.value("init_error", 0);
  const nlohmann::json all = root.value("gpus", nlohmann::json::array());
  std::vector<size_t> visible;
  if (const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES"); cvd != nullptr) {
    std::stringstream list(cvd);
    std::string item;
    while (std::getline(list, item, ',')) {
      size_t index = std::strtoul(item.c_str(), nullptr, 10);
      if (!item.empty() && index < all.size()) visible.push_back(index);
    }
  } else {
    for (size_t i = 0; i < all.size(); ++i) visible.push_back(i);
  }
  for (size_t index : visible) {
    const nlohmann::json& g = all[index];
    FakeCudaDevice d;
    d.name = g.value("name", std::string("Fake GPU"));
    ParseUuid(g.value("uuid", std::string()), d.uuid);
    d.memory_bytes = g.value("memory_bytes", uint64_t{256} << 20);
    for (const nlohmann::json& s : g.value("stuck_bits", nlohmann::json::array())) {
      d.stuck.push_back({s.value("offset", uint64_t{0}), s.value("bit", 0), s.value("value", 1)});
    }
    d.wrong_kernel_result = g.value("wrong_kernel_result", false);
    d.peer_access = g.value("peer_access", true);
    d.launch_error = g.value("launch_error", 0);
    f.gpus.push_back(std::move(d));
  }
  return true;
}

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

// The checks of a call that needs an initialized driver and a current context.
CUresult NeedContext(FakeCuda& f) {
  if (!f.initialized) return kNotInitialized;
  if (fake_cuda_current == nullptr || f.contexts.count(fake_cuda_current) == 0) {
    return kInvalidContext;
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

struct FakeCudaErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr FakeCudaErrorText kFakeCudaErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"},
};

const FakeCudaErrorText* FindError(CUresult r) {
  for (const FakeCudaErrorText& e : kFakeCudaErrors) {
    if (e.code == r) return &e;
  }
  return nullptr;
}

}  // namespace

#define FAKE_CUDA_EXPORT extern "C" __attribute__((visibility("default")))
#define FAKE_CUDA_LOCK  \
  FakeCuda& f = Fake(); \
  std::lock_guard<std::mutex> lock(f.mu)

FAKE_CUDA_EXPORT CUresult cuInit(unsigned int) {
  FAKE_CUDA_LOCK;
  if (f.initialized) return kOk;
  CUresult init_error = kOk;
  if (!LoadState(f, init_error)) return kNotInitialized;
  if (init_error != kOk) return init_error;
  f.initialized = true;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetCount(int* count) {
  FAKE_CUDA_LOCK;
  if (!f.initialized) return kNotInitialized;
  *count = static_cast<int>(f.gpus.size());
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGet(int* device, int ordinal) {
  FAKE_CUDA_LOCK;
  if (!f.initialized) return kNotInitialized;
  if (ordinal < 0 || ordinal >= static_cast<int>(f.gpus.size())) return kInvalidDevice;
  *device = ordinal;
  return kOk;
}

#define FAKE_CUDA_DEVICE(dev)                                                       \
  FAKE_CUDA_LOCK;                                                                   \
  if (!f.initialized) return kNotInitialized;                                       \
  if ((dev) < 0 || (dev) >= static_cast<int>(f.gpus.size())) return kInvalidDevice; \
  FakeCudaDevice& gpu = f.gpus[dev]

FAKE_CUDA_EXPORT CUresult cuDeviceGetName(char* name, int len, int dev) {
  FAKE_CUDA_DEVICE(dev);
  if (name == nullptr || len <= 0) return kInvalidValue;
  std::snprintf(name, len, "%s", gpu.name.c_str());
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetUuid(unsigned char* uuid, int dev) {
  FAKE_CUDA_DEVICE(dev);
  std::memcpy(uuid, gpu.uuid, 16);
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, int dev) {
  FAKE_CUDA_DEVICE(dev);
  *bytes = gpu.memory_bytes;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuDeviceCanAccessPeer(int* can, int dev, int peer) {
  FAKE_CUDA_DEVICE(dev);
  if (peer < 0 || peer >= static_cast<int>(f.gpus.size())) return kInvalidDevice;
  *can = dev != peer && gpu.peer_access && f.gpus[peer].peer_access;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuCtxCreate_v2(CUctx_st** ctx, unsigned int, int dev) {
  FAKE_CUDA_DEVICE(dev);
  (void)gpu;
  *ctx = new CUctx_st{dev, {}};
  f.contexts.insert(*ctx);
  fake_cuda_current = *ctx;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuCtxDestroy_v2(CUctx_st* ctx) {
  FAKE_CUDA_LOCK;
  if (f.contexts.erase(ctx) == 0) return kInvalidContext;
  if (fake_cuda_current == ctx) fake_cuda_current = nullptr;
  delete ctx;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuCtxSetCurrent(CUctx_st* ctx) {
  FAKE_CUDA_LOCK;
  if (ctx != nullptr && f.contexts.count(ctx) == 0) return kInvalidContext;
  fake_cuda_current = ctx;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuCtxSynchronize() {
  FAKE_CUDA_LOCK;
  return NeedContext(f);  // every call of the fake completes before it returns
}

FAKE_CUDA_EXPORT CUresult cuCtxEnablePeerAccess(CUctx_st* peer, unsigned int) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  if (f.contexts.count(peer) == 0) return kInvalidContext;
  int self = fake_cuda_current->gpu;
  if (self == peer->gpu || !f.gpus[self].peer_access || !f.gpus[peer->gpu].peer_access) {
    return kPeerUnsupported;
  }
  if (!fake_cuda_current->peers.insert(peer->gpu).second) return kPeerAlreadyEnabled;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  const FakeCudaDevice& gpu = f.gpus[fake_cuda_current->gpu];
  *free_bytes = gpu.memory_bytes - gpu.used;
  *total = gpu.memory_bytes;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
  FAKE_CUDA_LOCK;
  if (CUresult r = NeedContext(f); r != kOk) return r;
  if (bytes == 0) return kInvalidValue;
  int g = fake_cuda_current->gpu;
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
  const FakeCudaDevice& gpu = f.gpus[fake_cuda_current->gpu];
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

FAKE_CUDA_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  const FakeCudaErrorText* e = FindError(error);
  *text = e == nullptr ? nullptr : e->text;
  return e == nullptr ? kInvalidValue : kOk;
}

FAKE_CUDA_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  const FakeCudaErrorText* e = FindError(error);
  *name = e == nullptr ? nullptr : e->name;
  return e == nullptr ? kInvalidValue : kOk;
}

// libcuda-fake.so: a stand-in for libcuda.so.1 exporting the driver entry points lh-gpucheck
// calls, over host memory and a JSON state file. Its contract (what it fakes, how faults are
// given) is in fake_cuda_state.h. This file: the state, devices, contexts and error strings;
// fake_cuda_memory.cc: memory, copies, modules and launches.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/stages/fake_cuda/fake_cuda_internal.h"

namespace fake_cuda {

FakeCuda& Fake() {
  // An object, not a leaked pointer: the library is dlclosed, and LeakSanitizer would count a
  // pointer that went with it as a leak.
  static FakeCuda fake;
  return fake;
}

thread_local CUctx_st* current_context = nullptr;

CUresult NeedContext(FakeCuda& f) {
  if (!f.initialized) return kNotInitialized;
  if (current_context == nullptr || f.contexts.count(current_context) == 0) {
    return kInvalidContext;
  }
  return kOk;
}

namespace {

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
}  // namespace fake_cuda

using namespace fake_cuda;

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

FAKE_CUDA_EXPORT CUresult cuDeviceGetUuid(CUuuid_st* uuid, int dev) {
  FAKE_CUDA_DEVICE(dev);
  std::memcpy(uuid->bytes, gpu.uuid, 16);
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
  current_context = *ctx;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuCtxDestroy_v2(CUctx_st* ctx) {
  FAKE_CUDA_LOCK;
  if (f.contexts.erase(ctx) == 0) return kInvalidContext;
  if (current_context == ctx) current_context = nullptr;
  delete ctx;
  return kOk;
}

FAKE_CUDA_EXPORT CUresult cuCtxSetCurrent(CUctx_st* ctx) {
  FAKE_CUDA_LOCK;
  if (ctx != nullptr && f.contexts.count(ctx) == 0) return kInvalidContext;
  current_context = ctx;
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
  int self = current_context->gpu;
  if (self == peer->gpu || !f.gpus[self].peer_access || !f.gpus[peer->gpu].peer_access) {
    return kPeerUnsupported;
  }
  if (!current_context->peers.insert(peer->gpu).second) return kPeerAlreadyEnabled;
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

#include "stages/gpucheck/cuda_driver.h"

#include <dlfcn.h>

#include <cstdio>

#include "core/strings.h"

namespace longhaul::gpucheck {
namespace {

// Resolves `symbol` into `out`; false when the library lacks it.
template <typename F>
bool LoadCudaSymbol(void* lib, const char* symbol, F* out) {
  *out = reinterpret_cast<F>(::dlsym(lib, symbol));
  return *out != nullptr;
}

}  // namespace

CudaDriver::~CudaDriver() { ::dlclose(library_); }

std::string CudaDriver::ErrorText(CUresult r) const {
  const char* text = nullptr;
  const char* name = nullptr;
  if (api_.GetErrorString(r, &text) != kCudaSuccess || text == nullptr) text = "unknown error";
  if (api_.GetErrorName != nullptr && api_.GetErrorName(r, &name) == kCudaSuccess &&
      name != nullptr) {
    return StrCat(text, " (", name, ", ", r, ")");
  }
  return StrCat(text, " (", r, ")");
}

Status CudaDriver::Check(CUresult r, const std::string& what) const {
  if (r == kCudaSuccess) return OkStatus();
  return absl::InternalError(StrCat(what, ": ", ErrorText(r)));
}

Result<std::unique_ptr<CudaDriver>> LoadCudaDriver(const std::string& library) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return absl::NotFoundError(StrCat(library, " not found: this machine has no NVIDIA driver (",
                                      why != nullptr ? why : "dlopen failed", ")"));
  }
  CudaApi api{};
  struct Required {
    const char* name;
    bool loaded;
  };
  const Required required[] = {
      {"cuInit", LoadCudaSymbol(lib, "cuInit", &api.Init)},
      {"cuDeviceGetCount", LoadCudaSymbol(lib, "cuDeviceGetCount", &api.DeviceGetCount)},
      {"cuDeviceGet", LoadCudaSymbol(lib, "cuDeviceGet", &api.DeviceGet)},
      {"cuDeviceGetName", LoadCudaSymbol(lib, "cuDeviceGetName", &api.DeviceGetName)},
      {"cuDeviceTotalMem_v2", LoadCudaSymbol(lib, "cuDeviceTotalMem_v2", &api.DeviceTotalMem)},
      {"cuCtxCreate_v2", LoadCudaSymbol(lib, "cuCtxCreate_v2", &api.CtxCreate)},
      {"cuCtxDestroy_v2", LoadCudaSymbol(lib, "cuCtxDestroy_v2", &api.CtxDestroy)},
      {"cuCtxSetCurrent", LoadCudaSymbol(lib, "cuCtxSetCurrent", &api.CtxSetCurrent)},
      {"cuCtxSynchronize", LoadCudaSymbol(lib, "cuCtxSynchronize", &api.CtxSynchronize)},
      {"cuMemGetInfo_v2", LoadCudaSymbol(lib, "cuMemGetInfo_v2", &api.MemGetInfo)},
      {"cuMemAlloc_v2", LoadCudaSymbol(lib, "cuMemAlloc_v2", &api.MemAlloc)},
      {"cuMemFree_v2", LoadCudaSymbol(lib, "cuMemFree_v2", &api.MemFree)},
      {"cuMemcpyHtoD_v2", LoadCudaSymbol(lib, "cuMemcpyHtoD_v2", &api.MemcpyHtoD)},
      {"cuMemcpyDtoH_v2", LoadCudaSymbol(lib, "cuMemcpyDtoH_v2", &api.MemcpyDtoH)},
      {"cuMemsetD32_v2", LoadCudaSymbol(lib, "cuMemsetD32_v2", &api.MemsetD32)},
      {"cuModuleLoadData", LoadCudaSymbol(lib, "cuModuleLoadData", &api.ModuleLoadData)},
      {"cuModuleUnload", LoadCudaSymbol(lib, "cuModuleUnload", &api.ModuleUnload)},
      {"cuModuleGetFunction", LoadCudaSymbol(lib, "cuModuleGetFunction", &api.ModuleGetFunction)},
      {"cuLaunchKernel", LoadCudaSymbol(lib, "cuLaunchKernel", &api.LaunchKernel)},
      {"cuGetErrorString", LoadCudaSymbol(lib, "cuGetErrorString", &api.GetErrorString)},
      {"cuDeviceCanAccessPeer",
       LoadCudaSymbol(lib, "cuDeviceCanAccessPeer", &api.DeviceCanAccessPeer)},
      {"cuCtxEnablePeerAccess",
       LoadCudaSymbol(lib, "cuCtxEnablePeerAccess", &api.CtxEnablePeerAccess)},
      {"cuMemcpyPeer", LoadCudaSymbol(lib, "cuMemcpyPeer", &api.MemcpyPeer)},
  };
  for (const Required& r : required) {
    if (!r.loaded) {
      ::dlclose(lib);
      return absl::NotFoundError(
          StrCat(library, " has no ", r.name, ": not a CUDA driver, or one too old"));
    }
  }
  LoadCudaSymbol(lib, "cuDeviceGetUuid", &api.DeviceGetUuid);
  LoadCudaSymbol(lib, "cuGetErrorName", &api.GetErrorName);
  return std::make_unique<CudaDriver>(lib, api);
}

std::string FormatUuid(const CUuuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
  }
  return out;
}

}  // namespace longhaul::gpucheck

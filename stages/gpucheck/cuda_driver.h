// The CUDA driver API as lh-gpucheck uses it: libcuda loaded with dlopen, never linked, so that
// no CUDA toolkit or header is needed to build it. The few types are declared here with the
// layout cuda.h gives them (64-bit Linux); the function table holds the exact symbol names
// (the `_v2` entry points cuda.h's macros map the plain names to).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

// The driver's handle and UUID types, at global scope with C linkage under cuda.h's names, so
// that a call through the table has the type of the function it reaches (UBSan's -fsanitize=
// function checks it against the fake driver of the tests).
extern "C" {
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUuuid_st {
  char bytes[16];
};
}

namespace longhaul::gpucheck {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = ::CUctx_st*;
using CUmodule = ::CUmod_st*;
using CUfunction = ::CUfunc_st*;
using CUstream = ::CUstream_st*;
using CUuuid = ::CUuuid_st;

constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorNoDevice = 100;
constexpr CUresult kCudaErrorPeerAccessAlreadyEnabled = 704;

// The driver's entry points, by their dlsym names. Every pointer but the optional ones is set
// once LoadCudaDriver succeeds.
struct CudaApi {
  CUresult (*Init)(unsigned int flags);                                      // cuInit
  CUresult (*DeviceGetCount)(int* count);                                    // cuDeviceGetCount
  CUresult (*DeviceGet)(CUdevice* device, int ordinal);                      // cuDeviceGet
  CUresult (*DeviceGetName)(char* name, int len, CUdevice device);           // cuDeviceGetName
  CUresult (*DeviceTotalMem)(size_t* bytes, CUdevice device);                // cuDeviceTotalMem_v2
  CUresult (*CtxCreate)(CUcontext* ctx, unsigned int flags, CUdevice);       // cuCtxCreate_v2
  CUresult (*CtxDestroy)(CUcontext ctx);                                     // cuCtxDestroy_v2
  CUresult (*CtxSetCurrent)(CUcontext ctx);                                  // cuCtxSetCurrent
  CUresult (*CtxSynchronize)();                                              // cuCtxSynchronize
  CUresult (*MemGetInfo)(size_t* free, size_t* total);                       // cuMemGetInfo_v2
  CUresult (*MemAlloc)(CUdeviceptr* ptr, size_t bytes);                      // cuMemAlloc_v2
  CUresult (*MemFree)(CUdeviceptr ptr);                                      // cuMemFree_v2
  CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);    // cuMemcpyHtoD_v2
  CUresult (*MemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);          // cuMemcpyDtoH_v2
  CUresult (*MemsetD32)(CUdeviceptr dst, unsigned int value, size_t words);  // cuMemsetD32_v2
  CUresult (*ModuleLoadData)(CUmodule* module, const void* image);           // cuModuleLoadData
  CUresult (*ModuleUnload)(CUmodule module);                                 // cuModuleUnload
  CUresult (*ModuleGetFunction)(CUfunction* f, CUmodule module, const char* name);
  CUresult (*LaunchKernel)(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                           unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                           unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                           void** params, void** extra);          // cuLaunchKernel
  CUresult (*GetErrorString)(CUresult error, const char** text);  // cuGetErrorString
  CUresult (*DeviceCanAccessPeer)(int* can, CUdevice device, CUdevice peer);
  CUresult (*CtxEnablePeerAccess)(CUcontext peer, unsigned int flags);
  CUresult (*MemcpyPeer)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                         size_t bytes);  // cuMemcpyPeer
  // Optional: absent from a driver, the figure is left out.
  CUresult (*DeviceGetUuid)(CUuuid* uuid, CUdevice device) = nullptr;     // cuDeviceGetUuid
  CUresult (*GetErrorName)(CUresult error, const char** name) = nullptr;  // cuGetErrorName
};

// A loaded driver. Closes the library when destroyed (after every context is gone).
class CudaDriver {
 public:
  CudaDriver(void* library, const CudaApi& api) : library_(library), api_(api) {}
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  const CudaApi& api() const { return api_; }

  // "out of memory (CUDA_ERROR_OUT_OF_MEMORY, 2)".
  std::string ErrorText(CUresult r) const;
  // OK for CUDA_SUCCESS; otherwise Internal "`what`: ErrorText".
  Status Check(CUresult r, const std::string& what) const;

 private:
  void* library_;
  CudaApi api_;
};

// Loads `library` ("libcuda.so.1", or a path to a test double with the same entry points) and
// resolves the table. NotFound: the library does not load ("libcuda.so.1 not found: this
// machine has no NVIDIA driver (dlerror)") or lacks a required entry point (which one).
// cuInit is not called here.
Result<std::unique_ptr<CudaDriver>> LoadCudaDriver(const std::string& library);

// "GPU-6dd3a11a-4df4-de53-b7a7-d0b8e1d780ca", as nvidia-smi and NVML print a GPU's UUID.
std::string FormatUuid(const CUuuid& uuid);

}  // namespace longhaul::gpucheck

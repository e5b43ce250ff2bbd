#include "stages/gpucheck/gpu_device.h"

#include <algorithm>

#include "core/strings.h"

namespace longhaul::gpucheck {

std::string GpuHandle::Label() const {
  if (uuid.empty()) return StrCat("GPU ", ordinal);
  return StrCat("GPU ", ordinal, " (", uuid, ")");
}

Status OpenGpu(const CudaDriver& driver, int ordinal, GpuHandle& gpu) {
  const CudaApi& api = driver.api();
  gpu.ordinal = ordinal;
  RETURN_IF_ERROR(driver.Check(api.DeviceGet(&gpu.device, ordinal), "cuDeviceGet"));
  char name[256] = {};
  RETURN_IF_ERROR(
      driver.Check(api.DeviceGetName(name, sizeof name - 1, gpu.device), "cuDeviceGetName"));
  gpu.name = name;
  if (api.DeviceGetUuid != nullptr) {
    CUuuid uuid{};
    if (api.DeviceGetUuid(&uuid, gpu.device) == kCudaSuccess) gpu.uuid = FormatUuid(uuid);
  }
  size_t total = 0;
  RETURN_IF_ERROR(driver.Check(api.DeviceTotalMem(&total, gpu.device), "cuDeviceTotalMem_v2"));
  gpu.total_bytes = total;
  RETURN_IF_ERROR(driver.Check(api.CtxCreate(&gpu.ctx, 0, gpu.device), "cuCtxCreate_v2"));
  return OkStatus();
}

void CloseGpu(const CudaDriver& driver, GpuHandle& gpu) {
  if (gpu.ctx != nullptr) driver.api().CtxDestroy(gpu.ctx);
  gpu.ctx = nullptr;
}

Result<DeviceBuffer> DeviceBuffer::Allocate(const CudaDriver& driver, CUcontext ctx,
                                            uint64_t bytes) {
  RETURN_IF_ERROR(driver.Check(driver.api().CtxSetCurrent(ctx), "cuCtxSetCurrent"));
  CUdeviceptr ptr = 0;
  RETURN_IF_ERROR(driver.Check(driver.api().MemAlloc(&ptr, bytes),
                               StrCat("cuMemAlloc_v2 of ", bytes, " bytes")));
  return DeviceBuffer(driver, ctx, ptr, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : driver_(other.driver_), ctx_(other.ctx_), ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ == 0) return;
  driver_->api().CtxSetCurrent(ctx_);
  driver_->api().MemFree(ptr_);
}

Status WritePattern(const CudaDriver& driver, const DeviceBuffer& buf, Pattern p, uint64_t seed,
                    HostChunks& host) {
  const CudaApi& api = driver.api();
  const uint64_t words = buf.bytes() / 4;
  if (IsSolidPattern(p)) {
    RETURN_IF_ERROR(
        driver.Check(api.MemsetD32(buf.ptr(), PatternWord(p, seed, 0), words), "cuMemsetD32_v2"));
    return driver.Check(api.CtxSynchronize(), "cuCtxSynchronize after cuMemsetD32_v2");
  }
  for (uint64_t first = 0; first < words; first += host.data.size()) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(host.data.size(), words - first));
    FillPattern(p, seed, first, host.data.data(), n);
    RETURN_IF_ERROR(driver.Check(api.MemcpyHtoD(buf.ptr() + first * 4, host.data.data(), n * 4),
                                 "cuMemcpyHtoD_v2"));
  }
  return OkStatus();
}

Status VerifyPattern(const CudaDriver& driver, const DeviceBuffer& buf, Pattern p, uint64_t seed,
                     HostChunks& host, MismatchSummary& summary) {
  const uint64_t words = buf.bytes() / 4;
  for (uint64_t first = 0; first < words; first += host.data.size()) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(host.data.size(), words - first));
    RETURN_IF_ERROR(
        driver.Check(driver.api().MemcpyDtoH(host.data.data(), buf.ptr() + first * 4, n * 4),
                     "cuMemcpyDtoH_v2"));
    ComparePattern(p, seed, first, host.data.data(), n, host.expected.data(), summary);
  }
  return OkStatus();
}

}  // namespace longhaul::gpucheck

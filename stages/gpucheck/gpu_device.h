// One GPU as lh-gpucheck holds it (its context, its names), device buffers that free
// themselves, and the chunked pattern writes and read-backs both the memory test and the peer
// copy check use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "stages/gpucheck/cuda_driver.h"
#include "stages/gpucheck/patterns.h"

namespace longhaul::gpucheck {

struct GpuHandle {
  int ordinal = 0;  // the CUDA ordinal this process sees (after CUDA_VISIBLE_DEVICES)
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  std::string name;
  std::string uuid;  // "" when the driver has no cuDeviceGetUuid
  uint64_t total_bytes = 0;

  // "GPU 1 (GPU-6dd3a11a-...)", or "GPU 1" without a UUID: how messages name the GPU.
  std::string Label() const;
};

// Opens GPU `ordinal`: its handle, name, UUID, memory size and a context of its own.
// On error the handle has what was read so far (for the message) and no context.
Status OpenGpu(const CudaDriver& driver, int ordinal, GpuHandle& gpu);
// Destroys the context, if any.
void CloseGpu(const CudaDriver& driver, GpuHandle& gpu);

// Device memory of one context, freed (with that context current) when destroyed.
class DeviceBuffer {
 public:
  static Result<DeviceBuffer> Allocate(const CudaDriver& driver, CUcontext ctx, uint64_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr ptr() const { return ptr_; }
  uint64_t bytes() const { return bytes_; }

 private:
  DeviceBuffer(const CudaDriver& driver, CUcontext ctx, CUdeviceptr ptr, uint64_t bytes)
      : driver_(&driver), ctx_(ctx), ptr_(ptr), bytes_(bytes) {}
  const CudaDriver* driver_;
  CUcontext ctx_;
  CUdeviceptr ptr_;
  uint64_t bytes_;
};

// Host memory for chunked transfers: `words` 32-bit words for data and as many for the
// expected values.
struct HostChunks {
  explicit HostChunks(size_t words) : data(words), expected(words) {}
  std::vector<uint32_t> data;
  std::vector<uint32_t> expected;
};

// Writes pattern `p` over the whole buffer (its context current): cuMemsetD32 for a solid
// pattern, otherwise generated chunk by chunk on the host and copied in.
Status WritePattern(const CudaDriver& driver, const DeviceBuffer& buf, Pattern p, uint64_t seed,
                    HostChunks& host);
// Reads the whole buffer back chunk by chunk and adds every word that is not the pattern's
// to `summary`.
Status VerifyPattern(const CudaDriver& driver, const DeviceBuffer& buf, Pattern p, uint64_t seed,
                     HostChunks& host, MismatchSummary& summary);

}  // namespace longhaul::gpucheck

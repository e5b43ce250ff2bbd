// Where the agent learns about this node's GPUs (docs/gpus.md): one seam, three backends.
//
//   nvml        libnvidia-ml.so.1 (or --nvml-library), loaded with dlopen at run time, so the
//               agent builds and runs on machines without NVIDIA's driver;
//   nvidia-smi  `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` when NVML does not
//               load (no XID events, no remapped rows);
//   declared    no GPU tooling: the GPUs are a number (--gpus N), without telemetry.
//
// A backend is used from one thread at a time (the sampler's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/gpu/gpu_info.h"
#include "core/status.h"

namespace longhaul::agent {

// One reading of one GPU. A figure the board or backend does not report is absent.
struct GpuSample {
  int index = 0;
  std::string uuid;
  std::string name;
  // The GPU has fallen off the bus (NVML_ERROR_GPU_IS_LOST): the other figures are absent.
  bool lost = false;
  std::optional<double> sm_util_pct;   // time a kernel ran, over the driver's sample period
  std::optional<double> mem_util_pct;  // time device memory was read or written
  std::optional<int64_t> mem_used_bytes;
  std::optional<int64_t> mem_total_bytes;
  std::optional<double> power_watts;
  std::optional<double> temperature_c;
  std::optional<double> sm_clock_mhz;
  std::optional<uint64_t> throttle_reasons;  // NVML's clocks-event-reason bit mask
  std::optional<uint64_t> ecc_corrected;     // volatile: since the driver loaded
  std::optional<uint64_t> ecc_uncorrected;
  std::optional<uint64_t> remapped_correctable;  // rows remapped for correctable errors
  std::optional<uint64_t> remapped_uncorrectable;
  std::optional<bool> remap_pending;  // a remap waits for a GPU reset
  std::optional<bool> remap_failed;   // a remap failed: the GPU has run out of spare rows
  std::optional<uint64_t> pcie_replays;
  std::vector<int> xids;  // XID events since the previous sample, oldest first
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // "nvml", "nvidia-smi" or "declared".
  virtual std::string name() const = 0;
  // The GPUs found when the backend was opened (empty for "declared").
  virtual const std::vector<GpuInfo>& devices() const = 0;
  // Reads every GPU now. A GPU that cannot be read is reported `lost` or with figures absent;
  // an error means nothing could be read at all (the library or the tool failed).
  virtual Result<std::vector<GpuSample>> Sample() = 0;
};

// A backend with no GPUs to read: the count comes from --gpus.
class DeclaredGpuBackend : public GpuBackend {
 public:
  std::string name() const override { return "declared"; }
  const std::vector<GpuInfo>& devices() const override { return none_; }
  Result<std::vector<GpuSample>> Sample() override { return std::vector<GpuSample>{}; }

 private:
  std::vector<GpuInfo> none_;
};

struct GpuBackendChoice {
  std::unique_ptr<GpuBackend> backend;
  std::vector<std::string> notes;  // why a backend was passed over, for the log (once each)
};

// NVML from `nvml_library` (a name dlopen searches for, or a path); when it does not load,
// nvidia-smi from $PATH; when that is missing or fails, the declared backend.
GpuBackendChoice ChooseGpuBackend(const std::string& nvml_library);

}  // namespace longhaul::agent

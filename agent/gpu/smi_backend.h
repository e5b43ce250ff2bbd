// The nvidia-smi backend (gpu_backend.h): when NVML does not load, each sample runs
//   nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits
// and parses its lines. nvidia-smi reports no XID events (the kernel log gives them,
// kernel_log_xids.h, by the PCI bus ids asked for once at start) and no PCIe replay count; a
// figure it prints as "[N/A]" or "[Not Supported]" is left absent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/gpu/gpu_backend.h"

namespace longhaul::agent {

// The fields asked for, in order; the first ten are understood by every nvidia-smi, the
// rest by recent ones (an older nvidia-smi that rejects them is asked for the ten only).
const std::vector<std::string>& NvidiaSmiFields();
inline constexpr size_t kNvidiaSmiBasicFields = 10;

// Parses the output of a query for `fields` (a prefix of NvidiaSmiFields()). InvalidArgument
// names the line and the field that does not fit.
Result<std::vector<GpuSample>> ParseNvidiaSmiSamples(const std::string& output, size_t fields);

// Runs `nvidia_smi` (a path) once to list the GPUs. Unavailable when it fails.
Result<std::unique_ptr<GpuBackend>> OpenNvidiaSmi(const std::string& nvidia_smi);

}  // namespace longhaul::agent

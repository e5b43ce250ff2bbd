// The NVML backend (gpu_backend.h): libnvidia-ml loaded with dlopen, never linked, so that no
// NVIDIA header or library is needed to build the agent. The few types and constants used are
// declared in nvml_backend.cc with NVML's layout (nvml.h, NVML API version 2 entry points).
#pragma once

#include <memory>
#include <string>

#include "agent/gpu/gpu_backend.h"

namespace longhaul::agent {

// Loads `library` (e.g. "libnvidia-ml.so.1", or a path to a test double with the same entry
// points), calls nvmlInit_v2, lists the GPUs and registers each for XID events (a GPU that
// does not support events is sampled without them). Unavailable: the library does not load,
// lacks a required function, or nvmlInit_v2 fails; the message says which.
Result<std::unique_ptr<GpuBackend>> OpenNvml(const std::string& library);

}  // namespace longhaul::agent

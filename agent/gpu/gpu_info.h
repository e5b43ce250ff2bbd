// A GPU as the agent found it at start (agent/gpu/gpu_backend.h), for the inventory it offers.
#pragma once

#include <cstdint>
#include <string>

namespace longhaul::agent {

struct GpuInfo {
  int index = 0;
  std::string name;
  int64_t memory_mib = 0;
  std::string uuid;  // "GPU-..."; empty when the backend does not say
};

}  // namespace longhaul::agent

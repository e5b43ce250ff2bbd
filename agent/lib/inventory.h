// What this node offers: CPUs (the agent's affinity mask), memory (MemTotal) and GPUs (as the
// GPU backend found them, agent/gpu/gpu_backend.h). Flags override each figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/gpu/gpu_info.h"
#include "core/status.h"

namespace longhaul::agent {

struct Inventory {
  double cpus = 0;
  int64_t memory_bytes = 0;
  int gpus = 0;
  std::vector<GpuInfo> gpu_list;   // as the GPU backend found them
  std::vector<std::string> notes;  // what detection could not do, for the log
};

struct InventoryOverrides {
  std::optional<double> cpus;
  std::optional<int64_t> memory_bytes;
  std::optional<int> gpus;
};

// Parses the MemTotal line of /proc/meminfo into bytes.
Result<int64_t> ParseMemTotal(const std::string& meminfo);

// "16G", "512M", "1.5T", "1024" (bytes); K/M/G/T are powers of 1024, an optional "i"/"B"
// suffix is accepted ("16GiB", "16GB").
Result<int64_t> ParseMemorySize(const std::string& text);

// The full path of `program` on $PATH, or "" when it is not there.
std::string FindOnPath(const std::string& program);

// Detects CPUs and memory, takes `gpus` as found by the GPU backend, and applies `overrides`
// (--gpus N offers N whatever was found).
Inventory DetectInventory(const InventoryOverrides& overrides, const std::vector<GpuInfo>& gpus);

}  // namespace longhaul::agent

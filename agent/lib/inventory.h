// What this node offers: CPUs (the agent's affinity mask), memory (MemTotal) and GPUs (from
// nvidia-smi when it is on PATH). Flags override each figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::agent {

struct GpuInfo {
  int index = 0;
  std::string name;
  int64_t memory_mib = 0;
};

struct Inventory {
  double cpus = 0;
  int64_t memory_bytes = 0;
  int gpus = 0;
  std::vector<GpuInfo> gpu_list;   // as detected; empty when --gpus declared them
  std::vector<std::string> notes;  // what detection could not do, for the log
};

struct InventoryOverrides {
  std::optional<double> cpus;
  std::optional<int64_t> memory_bytes;
  std::optional<int> gpus;
};

// Parses `nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits`.
// InvalidArgument names the line that does not fit.
Result<std::vector<GpuInfo>> ParseNvidiaSmi(const std::string& output);

// Parses the MemTotal line of /proc/meminfo into bytes.
Result<int64_t> ParseMemTotal(const std::string& meminfo);

// "16G", "512M", "1.5T", "1024" (bytes); K/M/G/T are powers of 1024, an optional "i"/"B"
// suffix is accepted ("16GiB", "16GB").
Result<int64_t> ParseMemorySize(const std::string& text);

// The full path of `program` on $PATH, or "" when it is not there.
std::string FindOnPath(const std::string& program);

// Detects what it can and applies `overrides`. Runs nvidia-smi (with PATH as the agent has
// it) only when no --gpus override is given.
Inventory DetectInventory(const InventoryOverrides& overrides);

}  // namespace longhaul::agent

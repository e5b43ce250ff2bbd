// Writes the state file of the fake NVML (fake_nvml.cc) for tests and benchmarks: the GPUs
// it reports and what happens to them. Set $LONGHAUL_FAKE_NVML_STATE to the path before the
// library's nvmlInit_v2 (for an agent process: in its environment).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace longhaul::testing {

struct FakeGpuState {
  std::string uuid;
  std::string name = "NVIDIA H200";
  unsigned sm_util = 0, mem_util = 0;
  uint64_t mem_used = 0, mem_total = 150'754'820'096;  // an H200's 143771 MiB
  unsigned power_mw = 75'000, temp_c = 30, sm_clock_mhz = 345;
  uint64_t throttle_reasons = 0;
  uint64_t ecc_corrected = 0, ecc_uncorrected = 0;
  unsigned remapped_correctable = 0, remapped_uncorrectable = 0;
  bool remap_pending = false, remap_failed = false;
  unsigned pcie_replays = 0;
  std::vector<int> xids;  // every XID thrown so far; each is delivered once
  bool lost = false;
  std::string pci_bus_id;  // as NVML prints it; FakeGpus gives 00000000:3B:00.0, :3C:, ...
  bool xid_events = true;  // false: nvmlDeviceRegisterEvents answers NOT_SUPPORTED
};

// `n` healthy, idle GPUs with uuids GPU-fake-0000 ...
inline std::vector<FakeGpuState> FakeGpus(int n) {
  std::vector<FakeGpuState> gpus(n);
  for (int i = 0; i < n; ++i) {
    char uuid[32];
    std::snprintf(uuid, sizeof uuid, "GPU-fake-%04d", i);
    gpus[i].uuid = uuid;
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x3b + i);
    gpus[i].pci_bus_id = bus;
  }
  return gpus;
}

// Replaces `path` (by rename, so the library sees a new file) with `gpus`.
inline void WriteFakeNvmlState(const std::string& path, const std::vector<FakeGpuState>& gpus,
                               int init_error = 0) {
  nlohmann::json root = {{"init_error", init_error}, {"gpus", nlohmann::json::array()}};
  for (const FakeGpuState& g : gpus) {
    root["gpus"].push_back({{"uuid", g.uuid},
                            {"name", g.name},
                            {"sm_util", g.sm_util},
                            {"mem_util", g.mem_util},
                            {"mem_used", g.mem_used},
                            {"mem_total", g.mem_total},
                            {"power_mw", g.power_mw},
                            {"temp_c", g.temp_c},
                            {"sm_clock_mhz", g.sm_clock_mhz},
                            {"throttle_reasons", g.throttle_reasons},
                            {"ecc_corrected", g.ecc_corrected},
                            {"ecc_uncorrected", g.ecc_uncorrected},
                            {"remapped_correctable", g.remapped_correctable},
                            {"remapped_uncorrectable", g.remapped_uncorrectable},
                            {"remap_pending", g.remap_pending},
                            {"remap_failed", g.remap_failed},
                            {"pcie_replays", g.pcie_replays},
                            {"xids", g.xids},
                            {"lost", g.lost},
                            {"pci_bus_id", g.pci_bus_id},
                            {"xid_events", g.xid_events}});
  }
  std::string tmp = path + ".tmp";
  std::ofstream(tmp) << root.dump();
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace longhaul::testing

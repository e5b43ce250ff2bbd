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
  // As the backend prints it ("00000000:3B:00.0"); empty when it does not say. The kernel log
  // names a GPU by it (kmsg_xid.h).
  std::string pci_bus_id;
  // The backend delivers this GPU's XID events (NVML's event set); when false they are read
  // from the kernel log (kernel_log_xids.h).
  bool xid_events = false;
};

}  // namespace longhaul::agent

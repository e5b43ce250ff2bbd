#include "agent/gpu/kernel_log_xids.h"

#include <algorithm>

#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::agent {

KernelLogXidBackend::KernelLogXidBackend(std::unique_ptr<GpuBackend> inner,
                                         std::unique_ptr<KmsgXidReader> reader)
    : inner_(std::move(inner)), reader_(std::move(reader)) {
  for (const GpuInfo& g : inner_->devices()) {
    if (std::optional<std::string> bus = NormalizePciBusId(g.pci_bus_id)) by_bus_[*bus] = &g;
  }
}

Result<std::vector<GpuSample>> KernelLogXidBackend::Sample() {
  ASSIGN_OR_RETURN(std::vector<GpuSample> samples, inner_->Sample());
  auto log = GetLogger("agent");
  for (const KmsgXid& x : reader_->Poll()) {
    auto gpu = by_bus_.find(x.pci_bus_id);
    if (gpu == by_bus_.end()) {
      ++ignored_;
      log->warn("kernel log: XID {} names PCI {}, which is none of this node's GPUs; ignored",
                x.xid, x.pci_bus_id);
      continue;
    }
    const GpuInfo& info = *gpu->second;
    if (info.xid_events) continue;  // NVML delivers this GPU's XIDs: not counted twice
    auto s = std::find_if(samples.begin(), samples.end(),
                          [&](const GpuSample& g) { return g.index == info.index; });
    if (s == samples.end()) continue;  // not in this sample: the backend could not list it
    s->xids.push_back(x.xid);
    ++added_;
    log->info("GPU {}: XID {} in the kernel log (PCI {}, pid {}, {}): {}", info.index, x.xid,
              x.pci_bus_id, x.pid ? std::to_string(*x.pid) : "unknown",
              x.process.empty() ? "unknown process" : x.process, x.text);
  }
  if (reader_->lost() > lost_seen_) {
    log->warn(
        "kernel log: {} records were overwritten before they were read; an XID among "
        "them is missed",
        reader_->lost() - lost_seen_);
    lost_seen_ = reader_->lost();
  }
  if (!reader_->on() && !off_said_) {
    log->warn("kernel log: {}; XIDs are no longer read from it", reader_->off_reason());
    off_said_ = true;
  }
  return samples;
}

KernelLogXids AddKernelLogXids(std::unique_ptr<GpuBackend> inner, const std::string& kmsg_path) {
  KernelLogXids out;
  std::vector<std::string> without;  // indexes of the GPUs without XID events
  for (const GpuInfo& g : inner->devices()) {
    if (!g.xid_events) without.push_back(std::to_string(g.index));
  }
  if (without.empty()) {
    out.note = inner->devices().empty() ? "no GPUs to read XIDs of"
                                        : "XIDs from NVML's events; the kernel log is not read";
  } else if (kmsg_path.empty()) {
    out.note = StrCat("XIDs of GPU ", StrJoin(without, ", "), " are not seen: --kmsg is off");
    out.warn = true;
  } else {
    auto reader = std::make_unique<KmsgXidReader>(kmsg_path);
    if (!reader->on()) {
      out.note = StrCat("XIDs of GPU ", StrJoin(without, ", "),
                        " are not seen: the kernel log is not read: ", reader->off_reason());
      out.warn = true;
    } else {
      out.note =
          StrCat("XIDs of GPU ", StrJoin(without, ", "), " from the kernel log (", kmsg_path, ")");
      out.backend = std::make_unique<KernelLogXidBackend>(std::move(inner), std::move(reader));
      return out;
    }
  }
  out.backend = std::move(inner);
  return out;
}

}  // namespace longhaul::agent

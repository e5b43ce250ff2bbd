// XIDs from the kernel log for the GPUs whose backend delivers none (docs/gpus.md, "XIDs from
// the kernel log"): the nvidia-smi backend, and NVML where a GPU's XID events cannot be
// registered. A GpuBackend around the chosen one: each successful Sample() also reads the
// kernel log (KmsgXidReader) and adds each XID to GpuSample::xids of the GPU whose PCI bus id
// the line names, so classification, quarantine and reporting are those of NVML's events.
//
// No double counting: a GPU whose XIDs NVML delivers (GpuInfo::xid_events) takes none from the
// kernel log. A line naming a bus id that is none of this node's GPUs is logged and ignored.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/gpu/gpu_backend.h"
#include "agent/gpu/kmsg_xid.h"

namespace longhaul::agent {

class KernelLogXidBackend : public GpuBackend {
 public:
  KernelLogXidBackend(std::unique_ptr<GpuBackend> inner, std::unique_ptr<KmsgXidReader> reader);

  std::string name() const override { return inner_->name(); }
  const std::vector<GpuInfo>& devices() const override { return inner_->devices(); }
  // The inner backend's sample and the kernel log's XIDs since the last one. On an error of
  // the inner backend the kernel log is left unread, so its XIDs come with the next sample.
  Result<std::vector<GpuSample>> Sample() override;

  // Lines that named no GPU of this node, and XIDs added to samples, so far.
  uint64_t ignored() const { return ignored_; }
  uint64_t added() const { return added_; }

 private:
  std::unique_ptr<GpuBackend> inner_;
  std::unique_ptr<KmsgXidReader> reader_;
  std::map<std::string, const GpuInfo*> by_bus_;  // normalised bus id -> GPU
  uint64_t lost_seen_ = 0;
  uint64_t ignored_ = 0, added_ = 0;
  bool off_said_ = false;
};

struct KernelLogXids {
  std::unique_ptr<GpuBackend> backend;  // the one given, or a KernelLogXidBackend around it
  std::string note;                     // what was decided, for the log (once)
  bool warn = false;                    // some GPU's XIDs are not seen at all
};

// Wraps `inner` when one of its GPUs has no XID events and `kmsg_path` (--kmsg; empty: off)
// opens; otherwise returns `inner` with the reason in the note.
KernelLogXids AddKernelLogXids(std::unique_ptr<GpuBackend> inner, const std::string& kmsg_path);

}  // namespace longhaul::agent

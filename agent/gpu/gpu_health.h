// A GPU's health as the agent sees it (docs/gpus.md, "Health"): a GPU is unhealthy after a
// hardware-class XID (xid_table.h), an uncorrectable ECC error (volatile count above 0), a
// pending or failed row remap, or when it has fallen off the bus. Application-class XIDs are
// counted and remembered for the attempt that caused them; they leave the GPU healthy.
//
// Health is sticky: a GPU that turned unhealthy stays so until a pre-flight passes on it
// (ClearGpuHealth; the coordinator asks for one after the cool-down of a quarantined GPU) or
// the agent restarts. The coordinator takes it out of service meanwhile.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "agent/gpu/gpu_backend.h"
#include "agent/gpu/xid_table.h"

namespace longhaul::agent {

// What the agent keeps per GPU: the last sample and the health it has led to.
struct GpuState {
  GpuSample last;
  int64_t sampled_at_ms = 0;  // 0: never sampled
  bool healthy = true;
  std::string reason;  // why it is unhealthy (the first cause); empty while healthy
  int last_xid = 0;    // the last XID event of any class; 0: none yet
  int last_application_xid = 0;
  std::map<XidClass, uint64_t> xid_events;  // since the agent started, by class
  // The volatile uncorrectable ECC count when the health was last cleared: only errors above
  // it make the GPU unhealthy again (the count stays up until the driver reloads).
  uint64_t ecc_uncorrected_baseline = 0;
};

// Folds `sample` (taken at `now_ms`) into `state`. Returns a line for the log when the health
// changed, or when an XID event arrived (one line per event), else nothing.
std::vector<std::string> ApplyGpuSample(const XidTable& xids, const GpuSample& sample,
                                        int64_t now_ms, GpuState* state);

// After a passing pre-flight: the GPU is healthy again; ECC errors counted so far no longer
// count against it. A remap still pending or a GPU still lost turns it unhealthy again at the
// next sample.
void ClearGpuHealth(GpuState* state);

}  // namespace longhaul::agent

#include "agent/gpu/gpu_health.h"

#include "core/strings.h"

namespace longhaul::agent {
namespace {

// The first reason `s` gives to call the GPU unhealthy, or "" when it gives none.
std::string UnhealthyReason(const XidTable& xids, const GpuSample& s, uint64_t ecc_baseline) {
  if (s.lost) return "fell off the bus (GPU is lost)";
  for (int xid : s.xids) {
    XidEntry e = xids.Classify(xid);
    if (e.cls == XidClass::kHardware) return StrCat("XID ", xid, " (", e.description, ")");
  }
  if (s.ecc_uncorrected.value_or(0) > ecc_baseline) {
    return StrCat(*s.ecc_uncorrected - ecc_baseline, " uncorrectable ECC errors");
  }
  if (s.remap_failed.value_or(false)) return "a row remap failed";
  if (s.remap_pending.value_or(false)) return "a row remap is pending (needs a GPU reset)";
  return "";
}

}  // namespace

std::vector<std::string> ApplyGpuSample(const XidTable& xids, const GpuSample& sample,
                                        int64_t now_ms, GpuState* state) {
  std::vector<std::string> lines;
  std::string gpu =
      StrCat("GPU ", sample.index, " (", sample.uuid.empty() ? "no uuid" : sample.uuid, ")");
  for (int xid : sample.xids) {
    XidEntry e = xids.Classify(xid);
    ++state->xid_events[e.cls];
    state->last_xid = xid;
    if (e.cls == XidClass::kApplication) state->last_application_xid = xid;
    lines.push_back(StrCat(gpu, ": XID ", xid, ", class ", XidClassName(e.cls),
                           e.description.empty() ? "" : StrCat(": ", e.description)));
  }
  if (state->healthy) {
    std::string reason = UnhealthyReason(xids, sample, state->ecc_uncorrected_baseline);
    if (!reason.empty()) {
      state->healthy = false;
      state->reason = reason;
      lines.push_back(StrCat(gpu, ": healthy -> unhealthy: ", reason));
    }
  }
  state->last = sample;
  state->sampled_at_ms = now_ms;
  return lines;
}

void ClearGpuHealth(GpuState* state) {
  state->healthy = true;
  state->reason.clear();
  state->ecc_uncorrected_baseline = state->last.ecc_uncorrected.value_or(0);
}

}  // namespace longhaul::agent

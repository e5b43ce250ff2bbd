#include "agent/gpu/gpu_report.h"

namespace longhaul::agent {

v1::GpuReport MakeGpuReport(const std::vector<GpuState>& states, const XidTable& xids) {
  v1::GpuReport report;
  for (const GpuState& g : states) {
    const GpuSample& s = g.last;
    v1::GpuReading* r = report.add_gpus();
    r->set_index(s.index);
    r->set_uuid(s.uuid);
    r->set_ts_ms(g.sampled_at_ms);
    if (s.sm_util_pct) r->set_sm_util_pct(*s.sm_util_pct);
    if (s.mem_util_pct) r->set_mem_util_pct(*s.mem_util_pct);
    if (s.mem_used_bytes) r->set_mem_used_bytes(*s.mem_used_bytes);
    if (s.mem_total_bytes) r->set_mem_total_bytes(*s.mem_total_bytes);
    if (s.power_watts) r->set_power_watts(*s.power_watts);
    if (s.temperature_c) r->set_temperature_c(*s.temperature_c);
    if (s.sm_clock_mhz) r->set_sm_clock_mhz(*s.sm_clock_mhz);
    r->set_healthy(g.healthy);
    r->set_fault(g.reason);
    r->set_lost(s.lost);
    for (int xid : s.xids) {
      XidEntry e = xids.Classify(xid);
      v1::GpuReading::Xid* x = r->add_xids();
      x->set_xid(xid);
      x->set_klass(XidClassName(e.cls));
      x->set_description(e.description);
    }
  }
  return report;
}

}  // namespace longhaul::agent

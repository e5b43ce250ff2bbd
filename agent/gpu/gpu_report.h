// What the agent tells the coordinator of its GPUs after each sample (v1::GpuReport): each
// GPU's figures, its health verdict and the XID events of that sample with their class.
#pragma once

#include <vector>

#include "agent/gpu/gpu_health.h"
#include "agent/gpu/xid_table.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

v1::GpuReport MakeGpuReport(const std::vector<GpuState>& states, const XidTable& xids);

}  // namespace longhaul::agent

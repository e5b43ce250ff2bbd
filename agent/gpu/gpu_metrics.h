// The GPU families of the agent's /metrics (docs/gpus.md, "On /metrics"): the figures under
// the names dcgm-exporter gives them (DCGM_FI_DEV_*, labels gpu, UUID, device, modelName,
// Hostname), and the agent's health of each GPU as longhaul_agent_gpu_*.
#pragma once

#include <string>

#include "agent/gpu/gpu_sampler.h"
#include "core/metrics.h"

namespace longhaul::agent {

// Writes the families of `sampler`'s last samples to `w`; a figure a GPU did not report is
// left out of its family. `hostname` is the Hostname label.
void WriteGpuMetrics(const GpuSampler& sampler, const std::string& hostname,
                     metrics::TextWriter& w);

}  // namespace longhaul::agent

#include "agent/gpu/gpu_metrics.h"

#include <functional>
#include <optional>

#include "core/strings.h"

namespace longhaul::agent {
namespace {

// Every DCGM family is typed gauge: a counter's name ends in _total in this exposition, and
// dcgm-exporter's names for the ECC, remap and PCIe counts do not (they are counts since the
// driver loaded, which a driver reload resets).
struct GpuFamily {
  const char* name;
  const char* type;
  const char* help;
  std::function<std::optional<double>(const GpuState&)> value;
};

template <typename T>
std::optional<double> GpuFigure(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

constexpr double kGpuMiB = 1 << 20;

const std::vector<GpuFamily>& GpuFamilies() {
  static const auto* families = new std::vector<GpuFamily>{
      {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
       [](const GpuState& g) { return GpuFigure(g.last.sm_util_pct); }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
       [](const GpuState& g) { return GpuFigure(g.last.mem_util_pct); }},
      {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
       [](const GpuState& g) -> std::optional<double> {
         if (!g.last.mem_used_bytes) return std::nullopt;
         return static_cast<double>(*g.last.mem_used_bytes) / kGpuMiB;
       }},
      {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
       [](const GpuState& g) -> std::optional<double> {
         if (!g.last.mem_used_bytes || !g.last.mem_total_bytes) return std::nullopt;
         return static_cast<double>(*g.last.mem_total_bytes - *g.last.mem_used_bytes) / kGpuMiB;
       }},
      {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Framebuffer memory total (in MiB).",
       [](const GpuState& g) -> std::optional<double> {
         if (!g.last.mem_total_bytes) return std::nullopt;
         return static_cast<double>(*g.last.mem_total_bytes) / kGpuMiB;
       }},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).",
       [](const GpuState& g) { return GpuFigure(g.last.power_watts); }},
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
       [](const GpuState& g) { return GpuFigure(g.last.temperature_c); }},
      {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
       [](const GpuState& g) { return GpuFigure(g.last.sm_clock_mhz); }},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge",
       "Current clock throttle reasons (NVML's clocks event reason bit mask).",
       [](const GpuState& g) { return GpuFigure(g.last.throttle_reasons); }},
      {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "gauge",
       "Total number of single-bit (corrected) volatile ECC errors.",
       [](const GpuState& g) { return GpuFigure(g.last.ecc_corrected); }},
      {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gauge",
       "Total number of double-bit (uncorrected) volatile ECC errors.",
       [](const GpuState& g) { return GpuFigure(g.last.ecc_uncorrected); }},
      {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "gauge",
       "Number of remapped rows for correctable errors",
       [](const GpuState& g) { return GpuFigure(g.last.remapped_correctable); }},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "gauge",
       "Number of remapped rows for uncorrectable errors",
       [](const GpuState& g) { return GpuFigure(g.last.remapped_uncorrectable); }},
      {"DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether a row remap waits for a GPU reset",
       [](const GpuState& g) { return GpuFigure(g.last.remap_pending); }},
      {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed",
       [](const GpuState& g) { return GpuFigure(g.last.remap_failed); }},
      {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "gauge", "Total number of PCIe retries.",
       [](const GpuState& g) { return GpuFigure(g.last.pcie_replays); }},
      {"DCGM_FI_DEV_XID_ERRORS", "gauge",
       "Value of the last XID error encountered (0: none since the agent started).",
       [](const GpuState& g) { return std::optional<double>(g.last_xid); }},
      {"longhaul_agent_gpu_healthy", "gauge",
       "1 while the agent counts the GPU healthy, 0 after a hardware XID, an uncorrectable "
       "ECC error, a pending or failed row remap, or a fall off the bus.",
       [](const GpuState& g) { return std::optional<double>(g.healthy ? 1 : 0); }},
      {"longhaul_agent_gpu_lost", "gauge",
       "1 while the GPU does not answer (fallen off the bus), else 0.",
       [](const GpuState& g) { return std::optional<double>(g.last.lost ? 1 : 0); }},
      {"longhaul_agent_gpu_last_application_xid", "gauge",
       "The last application-class XID of the GPU (charged to the attempt); 0: none.",
       [](const GpuState& g) { return std::optional<double>(g.last_application_xid); }},
  };
  return *families;
}

metrics::Labels GpuLabels(const GpuState& g, const std::string& hostname) {
  return {{"gpu", StrCat(g.last.index)},
          {"UUID", g.last.uuid},
          {"device", StrCat("nvidia", g.last.index)},
          {"modelName", g.last.name},
          {"Hostname", hostname}};
}

}  // namespace

void WriteGpuMetrics(const GpuSampler& sampler, const std::string& hostname,
                     metrics::TextWriter& w) {
  std::vector<GpuState> gpus = sampler.Snapshot();
  w.Family("longhaul_agent_gpu_backend", "gauge",
           "1 for the backend the agent reads its GPUs through (nvml, nvidia-smi, declared).");
  w.Sample("longhaul_agent_gpu_backend", {{"backend", sampler.backend().name()}}, 1);
  w.Single("longhaul_agent_gpu_samples_total", "counter", "GPU samples taken (every --gpu-sample).",
           static_cast<double>(sampler.samples()));
  w.Single("longhaul_agent_gpu_sample_failures_total", "counter",
           "GPU samples whose backend call failed.", static_cast<double>(sampler.failures()));
  for (const GpuFamily& f : GpuFamilies()) {
    w.Family(f.name, f.type, f.help);
    for (const GpuState& g : gpus) {
      if (std::optional<double> v = f.value(g)) w.Sample(f.name, GpuLabels(g, hostname), *v);
    }
  }
  w.Family("longhaul_agent_gpu_unhealthy", "gauge",
           "1 for each unhealthy GPU, with the first reason the agent saw.");
  for (const GpuState& g : gpus) {
    if (g.healthy) continue;
    metrics::Labels labels = GpuLabels(g, hostname);
    labels.emplace_back("reason", g.reason);
    w.Sample("longhaul_agent_gpu_unhealthy", labels, 1);
  }
  w.Family("longhaul_agent_gpu_xid_events_total", "counter",
           "XID events since the agent started, by class of the XID table.");
  for (const GpuState& g : gpus) {
    for (const auto& [cls, n] : g.xid_events) {
      metrics::Labels labels = GpuLabels(g, hostname);
      labels.emplace_back("class", XidClassName(cls));
      w.Sample("longhaul_agent_gpu_xid_events_total", labels, static_cast<double>(n));
    }
  }
}

}  // namespace longhaul::agent

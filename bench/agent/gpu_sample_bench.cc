// The agent's GPU sampling cost: GpuSampler over NVML with 8 GPUs, one sample after another
// (a FakeClock, so no waiting), CPU time per sample (CLOCK_PROCESS_CPUTIME_ID: this process
// only, NVML's own threads included) and what that is at --gpu-sample 5s as a share of one
// core; and the cost of rendering the GPU families for one /metrics scrape.
//
//   gpu_sample_bench [--nvml PATH] [--samples 2000] [--interval-ms 5000]
// Without --nvml it loads the fake NVML built beside it (tests/agent/fake_nvml), whose calls
// stat its state file: an upper bound for the fake. With --nvml libnvidia-ml.so.1 on a GPU node
// it measures the real library over that node's GPUs.
#include <stdlib.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "agent/gpu/gpu_metrics.h"
#include "agent/gpu/gpu_sampler.h"
#include "agent/gpu/nvml_backend.h"
#include "core/clock.h"
#include "tests/agent/fake_nvml/fake_nvml_state.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/test_util.h"

namespace {

double CpuSeconds() {
  struct timespec ts;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace longhaul;
  using namespace longhaul::agent;
  std::string nvml = LONGHAUL_FAKE_NVML;
  int samples = 2000;
  int64_t interval_ms = 5000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--nvml") == 0) nvml = argv[i + 1];
    if (std::strcmp(argv[i], "--samples") == 0) samples = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--interval-ms") == 0) interval_ms = std::atoll(argv[i + 1]);
  }
  testing::TempDir tmp;
  std::string state = tmp.Join("nvml.json");
  if (nvml == LONGHAUL_FAKE_NVML) {
    std::vector<testing::FakeGpuState> gpus = testing::FakeGpus(8);
    for (auto& g : gpus) {
      g.sm_util = 90;
      g.mem_used = 60ULL << 30;
      g.power_mw = 650'000;
    }
    testing::WriteFakeNvmlState(state, gpus);
    ::setenv("LONGHAUL_FAKE_NVML_STATE", state.c_str(), 1);
  }
  auto backend = OpenNvml(nvml);
  if (!backend.ok()) {
    std::fprintf(stderr, "gpu_sample_bench: %s\n", std::string(backend.status().message()).c_str());
    return 1;
  }
  size_t n_gpus = (*backend)->devices().size();
  longhaul::testing::FakeClock clock;
  GpuSampler sampler(std::move(*backend), XidTable::Builtin(), &clock, interval_ms);
  sampler.SampleNow();  // warm-up
  double start = CpuSeconds();
  for (int i = 0; i < samples; ++i) sampler.SampleNow();
  double per_sample = (CpuSeconds() - start) / samples;
  start = CpuSeconds();
  size_t bytes = 0;
  for (int i = 0; i < samples; ++i) {
    metrics::TextWriter w;
    WriteGpuMetrics(sampler, "bench-host", w);
    bytes = w.text().size();
  }
  double per_render = (CpuSeconds() - start) / samples;
  std::printf("GPU sampling through %s, %zu GPUs, %d samples\n", nvml.c_str(), n_gpus, samples);
  std::printf("  CPU per sample:           %.1f us (%.2f us per GPU)\n", per_sample * 1e6,
              n_gpus ? per_sample * 1e6 / static_cast<double>(n_gpus) : 0.0);
  std::printf("  at one sample per %.0f s:   %.4f %% of one core\n", interval_ms / 1000.0,
              per_sample / (interval_ms / 1000.0) * 100);
  std::printf("  /metrics GPU families:    %.1f us per scrape, %zu bytes\n", per_render * 1e6,
              bytes);
  return 0;
}

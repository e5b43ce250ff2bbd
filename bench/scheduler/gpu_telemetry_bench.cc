// What an attempt's GPU telemetry costs longhauld (docs/gpus.md, "Telemetry per attempt"): a
// simulated 8-GPU attempt sampled every 5 s for 5 days goes through GpuTelemetry, and its rows
// are written to a real SQLite store as the scheduler writes them (due rows each batch, a
// batch per report, the last rows at the end). Prints the rows kept, the row writes, the
// largest series, the database's growth and the CPU time per reading.
//
//   gpu_telemetry_bench [--gpus 8] [--days 5] [--sample-ms 5000]
#include <sys/resource.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/strings.h"
#include "daemon/scheduler/gpu_telemetry.h"
#include "daemon/store/sqlite_store.h"

namespace {

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int64_t FileBytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace longhaul;
  int gpus = 8;
  double days = 5;
  int64_t sample_ms = 5000;
  CLI::App app("GPU telemetry storage cost of one long attempt");
  app.add_option("--gpus", gpus, "GPUs the attempt holds");
  app.add_option("--days", days, "how long it runs");
  app.add_option("--sample-ms", sample_ms, "the agent's --gpu-sample");
  CLI11_PARSE(app, argc, argv);

  char tmpl[] = "/tmp/gpu-telemetry-bench-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::string db = dir + "/longhaul.db";
  auto store = store::SqliteStore::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  int64_t base_bytes = FileBytes(db);
  scheduler::GpuTelemetry telemetry;
  const int64_t attempt = 1;
  const int64_t end_ms = static_cast<int64_t>(days * 24 * 3600 * 1000);
  int64_t readings = 0, row_writes = 0;
  size_t largest = 0;
  double cpu0 = CpuSeconds();
  auto write = [&](const std::vector<store::GpuSeriesRow>& rows) {
    if (rows.empty()) return;
    if (!(*store)->Begin().ok()) std::abort();
    for (const auto& r : rows) {
      largest = std::max(largest, r.series_json.size());
      if (!(*store)->UpsertGpuSeries(r).ok()) std::abort();
      ++row_writes;
    }
    if (!(*store)->Commit().ok()) std::abort();
  };
  for (int64_t t = sample_ms; t <= end_ms; t += sample_ms) {
    for (int g = 0; g < gpus; ++g) {
      v1::GpuReading r;
      r.set_index(g);
      r.set_uuid(StrCat("GPU-", g));
      r.set_ts_ms(t);
      r.set_sm_util_pct(static_cast<double>((t / 60'000 + g) % 100));
      r.set_mem_util_pct(40);
      r.set_mem_used_bytes(int64_t{70} << 30);
      r.set_mem_total_bytes(int64_t{141} << 30);
      r.set_power_watts(650);
      r.set_temperature_c(60);
      telemetry.Add(attempt, r);
      ++readings;
    }
    write(telemetry.TakeDue(t));
  }
  write(telemetry.Finish(attempt));
  double cpu = CpuSeconds() - cpu0;
  store->reset();
  std::printf("attempt: %d GPUs x %.1f days at %lld ms: %lld readings\n", gpus, days,
              static_cast<long long>(sample_ms), static_cast<long long>(readings));
  std::printf("rows kept: %d (one per GPU); row writes over its life: %lld\n", gpus,
              static_cast<long long>(row_writes));
  std::printf("largest series: %zu bytes of JSON (at most %zu points)\n", largest,
              scheduler::GpuSeries::kHead + scheduler::GpuSeries::kTail);
  std::printf("database growth: %lld bytes\n", static_cast<long long>(FileBytes(db) - base_bytes));
  std::printf("cpu: %.3f s in all, %.2f us per reading (writes included)\n", cpu,
              cpu * 1e6 / static_cast<double>(readings));
  return 0;
}

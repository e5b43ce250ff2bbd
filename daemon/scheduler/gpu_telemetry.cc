#include "daemon/scheduler/gpu_telemetry.h"

#include <algorithm>

namespace longhaul::scheduler {

void GpuTelemetry::Add(int64_t attempt_id, const v1::GpuReading& r) {
  Attempt& a = attempts_[attempt_id];
  Gpu& g = a.gpus[r.index()];
  int64_t prev = g.series.last_ts_ms();
  // A gap longer than a minute (the agent was away) is not counted as sampled time.
  int64_t span = prev == 0 ? 0 : std::clamp<int64_t>(r.ts_ms() - prev, 0, 60'000);
  g.series.Add(r, span);
  g.uuid = r.uuid();
  g.dirty = true;
  g.last_util = r.has_sm_util_pct() ? r.sm_util_pct() : -1;
  g.last_mem_used = r.has_mem_used_bytes() ? r.mem_used_bytes() : -1;
  g.last_mem_total = r.has_mem_total_bytes() ? r.mem_total_bytes() : -1;
  bool all_idle = !a.gpus.empty() && std::all_of(a.gpus.begin(), a.gpus.end(), [](const auto& kv) {
    return kv.second.last_util >= 0 && kv.second.last_util < GpuSeries::kIdleBelowPct;
  });
  if (!all_idle) {
    a.idle_since_ms = 0;
    a.idle_noticed = false;
  } else if (a.idle_since_ms == 0) {
    a.idle_since_ms = r.ts_ms();
  }
  if (a.written_ms == 0) a.written_ms = r.ts_ms();  // the first write a minute in
}

int64_t GpuTelemetry::IdleSince(int64_t attempt_id) const {
  auto it = attempts_.find(attempt_id);
  return it == attempts_.end() ? 0 : it->second.idle_since_ms;
}

bool GpuTelemetry::TakeIdleNotice(int64_t attempt_id, int64_t now_ms, int64_t window_ms,
                                  int64_t counted_from_ms) {
  auto it = attempts_.find(attempt_id);
  if (it == attempts_.end() || window_ms <= 0) return false;
  Attempt& a = it->second;
  if (a.idle_since_ms == 0 || a.idle_noticed) return false;
  if (now_ms - std::max(a.idle_since_ms, counted_from_ms) < window_ms) return false;
  a.idle_noticed = true;
  return true;
}

std::optional<GpuTelemetry::MemoryWarning> GpuTelemetry::TakeMemoryWarning(int64_t attempt_id) {
  auto it = attempts_.find(attempt_id);
  if (it == attempts_.end() || it->second.memory_warned) return std::nullopt;
  for (const auto& [index, g] : it->second.gpus) {
    if (g.last_mem_used < 0 || g.last_mem_total <= 0) continue;
    if (static_cast<double>(g.last_mem_used) >=
        kMemoryWarnFraction * static_cast<double>(g.last_mem_total)) {
      it->second.memory_warned = true;
      return MemoryWarning{index, g.last_mem_used, g.last_mem_total};
    }
  }
  return std::nullopt;
}

void GpuTelemetry::Rows(int64_t attempt_id, Attempt& a, std::vector<store::GpuSeriesRow>* out) {
  for (auto& [index, g] : a.gpus) {
    if (!g.dirty) continue;
    g.dirty = false;
    store::GpuSeriesRow& row = out->emplace_back();
    row.attempt_id = attempt_id;
    row.gpu_index = index;
    row.uuid = g.uuid;
    row.series_json = g.series.ToJson();
    GpuSummary s = g.series.Summarize();
    row.sampled_ms = s.sampled_ms;
    if (s.mean_sm_util >= 0) {
      row.util_ms = s.mean_sm_util * static_cast<double>(s.sampled_ms);
      row.util_known_ms = s.sampled_ms;
    }
    row.peak_mem = s.peak_mem_used;
    row.mem_total = s.mem_total;
    row.energy_wh = s.energy_wh;
    row.idle_ms = s.idle_ms;
  }
}

std::vector<store::GpuSeriesRow> GpuTelemetry::TakeDue(int64_t now_ms) {
  std::vector<store::GpuSeriesRow> rows;
  for (auto& [id, a] : attempts_) {
    if (now_ms - a.written_ms < kWriteEveryMs) continue;
    a.written_ms = now_ms;
    Rows(id, a, &rows);
  }
  return rows;
}

std::vector<store::GpuSeriesRow> GpuTelemetry::Finish(int64_t attempt_id) {
  std::vector<store::GpuSeriesRow> rows;
  auto it = attempts_.find(attempt_id);
  if (it == attempts_.end()) return rows;
  Rows(attempt_id, it->second, &rows);
  attempts_.erase(it);
  return rows;
}

}  // namespace longhaul::scheduler

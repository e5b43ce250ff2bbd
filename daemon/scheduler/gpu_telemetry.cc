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
  bool all_idle = !a.gpus.empty() && std::all_of(a.gpus.begin(), a.gpus.end(), [](const auto& kv) {
    return kv.second.last_util >= 0 && kv.second.last_util < GpuSeries::kIdleBelowPct;
  });
  if (!all_idle) {
    a.idle_since_ms = 0;
  } else if (a.idle_since_ms == 0) {
    a.idle_since_ms = r.ts_ms();
  }
  if (a.written_ms == 0) a.written_ms = r.ts_ms();  // the first write a minute in
}

int64_t GpuTelemetry::IdleSince(int64_t attempt_id) const {
  auto it = attempts_.find(attempt_id);
  return it == attempts_.end() ? 0 : it->second.idle_since_ms;
}

void GpuTelemetry::Rows(int64_t attempt_id, Attempt& a, std::vector<store::GpuSeriesRow>* out) {
  for (auto& [index, g] : a.gpus) {
    if (!g.dirty) continue;
    g.dirty = false;
    out->push_back({attempt_id, index, g.uuid, g.series.ToJson()});
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

// Each running attempt's GPU telemetry (docs/gpus.md, "Telemetry"): a GpuSeries per GPU it
// holds, fed by its agent's reports, written to the store at most once a minute while it runs
// and once when it ends. One owner; the scheduler says which attempt holds which GPU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/scheduler/gpu_series.h"
#include "daemon/store/rows.h"

namespace longhaul::scheduler {

class GpuTelemetry {
 public:
  static constexpr int64_t kWriteEveryMs = 60'000;

  // Adds `r` to the series of `attempt_id`'s GPU r.index().
  void Add(int64_t attempt_id, const v1::GpuReading& r);
  // Since when every GPU of the attempt has been under GpuSeries::kIdleBelowPct (0: not now,
  // or no utilisation known).
  int64_t IdleSince(int64_t attempt_id) const;
  // True once per idle episode: every GPU of the attempt has been idle for `window_ms` by
  // `now_ms` (the episode ends when one GPU works again).
  // Idle time is counted from `counted_from_ms` at the earliest (0: from the spell's start).
  bool TakeIdleNotice(int64_t attempt_id, int64_t now_ms, int64_t window_ms,
                      int64_t counted_from_ms = 0);
  // Once per attempt: a GPU whose memory used reached kMemoryWarnFraction of its total, as
  // (index, used, total).
  static constexpr double kMemoryWarnFraction = 0.95;
  struct MemoryWarning {
    int index = 0;
    int64_t used = 0, total = 0;
  };
  std::optional<MemoryWarning> TakeMemoryWarning(int64_t attempt_id);
  // Series changed and not written for kWriteEveryMs, as rows to write.
  std::vector<store::GpuSeriesRow> TakeDue(int64_t now_ms);
  // The attempt ended: its rows not yet written; it is forgotten.
  std::vector<store::GpuSeriesRow> Finish(int64_t attempt_id);
  void Clear() { attempts_.clear(); }
  size_t attempts() const { return attempts_.size(); }

 private:
  struct Gpu {
    GpuSeries series;
    std::string uuid;
    bool dirty = false;
    double last_util = -1;
    int64_t last_mem_used = -1, last_mem_total = -1;
  };
  struct Attempt {
    std::map<int, Gpu> gpus;
    int64_t idle_since_ms = 0;
    int64_t written_ms = 0;
    bool idle_noticed = false;
    bool memory_warned = false;
  };
  static void Rows(int64_t attempt_id, Attempt& a, std::vector<store::GpuSeriesRow>* out);
  std::map<int64_t, Attempt> attempts_;
};

}  // namespace longhaul::scheduler

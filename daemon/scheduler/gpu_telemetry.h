// Each running attempt's GPU telemetry (docs/gpus.md, "Telemetry"): a GpuSeries per GPU it
// holds, fed by its agent's reports, written to the store at most once a minute while it runs
// and once when it ends. One owner; the scheduler says which attempt holds which GPU.
#pragma once

#include <cstdint>
#include <map>
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
  };
  struct Attempt {
    std::map<int, Gpu> gpus;
    int64_t idle_since_ms = 0;
    int64_t written_ms = 0;
  };
  static void Rows(int64_t attempt_id, Attempt& a, std::vector<store::GpuSeriesRow>* out);
  std::map<int64_t, Attempt> attempts_;
};

}  // namespace longhaul::scheduler

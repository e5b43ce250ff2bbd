// One attempt's telemetry of one GPU, downsampled to a bounded size (docs/gpus.md,
// "Telemetry"): the first kHead samples as they were taken (the first 10 minutes at the
// default 5 s), then at most kTail buckets; when the tail is full, adjacent buckets are merged
// in pairs, so its resolution halves and its size stays bounded however long the attempt
// runs. A 5-day attempt ends with buckets of about 15 minutes; its row never exceeds
// kHead + kTail points.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::scheduler {

// A sample, or the merge of several: means weighted by time, maxima as maxima. -1: not known.
struct GpuPoint {
  int64_t t_ms = 0;     // the start of what it covers
  int64_t span_ms = 0;  // how long it covers (a sample: the time since the previous one)
  double sm_util = -1;  // mean %
  double mem_util = -1;
  int64_t mem_used_max = -1;  // bytes
  int64_t mem_total = -1;
  double power_w = -1;  // mean watts
  double temp_max = -1;
  double idle_ms = 0;  // the part of span_ms its SM utilisation was under the idle threshold
};

struct GpuSummary {
  int64_t sampled_ms = 0;      // time covered by samples
  double mean_sm_util = -1;    // %, time-weighted
  int64_t peak_mem_used = -1;  // bytes
  int64_t mem_total = -1;
  double energy_wh = 0;  // sum of power x time
  int64_t idle_ms = 0;   // time under the idle threshold
};

class GpuSeries {
 public:
  static constexpr size_t kHead = 120;
  static constexpr size_t kTail = 480;
  // SM utilisation under this counts as idle.
  static constexpr double kIdleBelowPct = 5;

  // Adds a reading taken `span_ms` after the previous one of this GPU (0 for the first).
  void Add(const v1::GpuReading& r, int64_t span_ms);
  GpuSummary Summarize() const;
  size_t size() const { return head_.size() + tail_.size(); }
  // Every point, oldest first.
  std::vector<GpuPoint> Points() const;
  int64_t last_ts_ms() const { return last_ts_ms_; }

  std::string ToJson() const;
  // InvalidArgument naming what is wrong with `json`.
  static Result<GpuSeries> FromJson(const std::string& json);

 private:
  std::vector<GpuPoint> head_, tail_;
  int64_t last_ts_ms_ = 0;
};

// Summaries of several GPUs together (a stage's): sums of time, energy and idle time, the
// mean utilisation weighted by time, the largest peak.
GpuSummary CombineSummaries(const std::vector<GpuSummary>& each);

}  // namespace longhaul::scheduler

// Smoothed progress rate and ETA from progress events.
//
// An exponentially weighted rate with a time constant (not a per-event weight), so a job that
// reports every 50 ms and one that reports every 5 minutes both get a rate that reflects about
// the last `tau_ms` of work. Events closer together than `min_interval_ms` are merged, so a burst
// of lines written at once does not read as an infinite rate.
#pragma once

#include <cstdint>
#include <optional>

namespace longhaul::scheduler {

class RateEstimator {
 public:
  explicit RateEstimator(int64_t tau_ms = 30'000, int64_t min_interval_ms = 500)
      : tau_ms_(tau_ms), min_interval_ms_(min_interval_ms) {}

  // A progress report: `done` units at `now_ms`. A `done` lower than before (a restart from a
  // checkpoint further back) resets the estimate.
  void Observe(double done, int64_t now_ms);

  // Units per second; 0 until two reports at least min_interval_ms apart.
  double rate() const { return rate_; }
  bool has_rate() const { return has_rate_; }
  // Seconds until `total` at the current rate; nullopt when unknown.
  std::optional<double> EtaSeconds(double done, double total) const;

 private:
  int64_t tau_ms_;
  int64_t min_interval_ms_;
  bool started_ = false;
  bool has_rate_ = false;
  double anchor_done_ = 0;
  int64_t anchor_ms_ = 0;
  double rate_ = 0;
};

}  // namespace longhaul::scheduler

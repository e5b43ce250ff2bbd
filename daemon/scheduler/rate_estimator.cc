#include "daemon/scheduler/rate_estimator.h"

#include <cmath>

namespace longhaul::scheduler {

void RateEstimator::Observe(double done, int64_t now_ms) {
  if (!started_ || done < anchor_done_) {
    started_ = true;
    has_rate_ = false;
    rate_ = 0;
    anchor_done_ = done;
    anchor_ms_ = now_ms;
    return;
  }
  int64_t dt = now_ms - anchor_ms_;
  if (dt < min_interval_ms_) return;  // merge with the next report
  double inst = (done - anchor_done_) * 1000.0 / static_cast<double>(dt);
  if (!has_rate_) {
    rate_ = inst;
    has_rate_ = true;
  } else {
    double alpha = 1.0 - std::exp(-static_cast<double>(dt) / static_cast<double>(tau_ms_));
    rate_ += alpha * (inst - rate_);
  }
  anchor_done_ = done;
  anchor_ms_ = now_ms;
}

std::optional<double> RateEstimator::EtaSeconds(double done, double total) const {
  if (!has_rate_ || total <= 0) return std::nullopt;
  if (done >= total) return 0.0;
  if (rate_ <= 0) return std::nullopt;
  return (total - done) / rate_;
}

}  // namespace longhaul::scheduler

// What longhauld counts for Prometheus (docs/operations.md, "Metrics"). The scheduler's thread
// updates the counters; /metrics reads them from another thread: every instrument is
// thread-safe. Gauges are not stored here: they are computed at scrape time from the
// scheduler's state and the store (rpc::ClientApi::Metrics). The instruments and the text
// format are core/metrics.h.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/metrics.h"

namespace longhaul::metrics {

// The coordinator's own counters; one per longhauld, owned by the Coordinator.
struct CoordinatorMetrics {
  std::atomic<uint64_t> attempts_started{0};
  LabeledCounter attempt_failures;  // by the kind of end: exit, signal, timeout, lost, ...
  std::atomic<uint64_t> events_ingested{0};
  // Attempts that ended stopped by a preemption, by the class of their run; and their GPU time
  // after their last checkpoint (or start), in GPU-milliseconds (docs/scheduling.md).
  LabeledCounter preemptions;
  std::atomic<uint64_t> preemption_lost_gpu_ms{0};
  // Notifications by event kind and state: "pending" when decided, "retry" for each failed
  // try that will be tried again, "delivered", "failed" (tries exhausted).
  LabeledCounter2 notifications;
  // From a stage becoming ready to its agent saying it started.
  Histogram handoff_seconds{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                             10, 30, 60}};
  // One store transaction's commit (a batch of the scheduler loop).
  Histogram sqlite_commit_seconds{
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}};
};

}  // namespace longhaul::metrics

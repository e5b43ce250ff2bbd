// Tunables of the scheduler. Defaults suit real campaigns; tests shrink the timeouts.
#pragma once

#include <cstdint>
#include <vector>

#include "daemon/scheduler/budget_config.h"
#include "daemon/scheduler/gpu_fleet.h"
#include "daemon/scheduler/quota.h"

namespace longhaul::scheduler {

struct SchedulerOptions {
  // An agent with no heartbeat for this long is unreachable and its attempts `unknown`.
  int64_t agent_timeout_ms = 15'000;
  // An agent silent this long is lost: its attempts are `lost` and the retry policy acts. Long
  // enough to ride out a minute-long network drop.
  int64_t lost_after_ms = 180'000;
  // How often agents send heartbeats (told to them in Welcome).
  int64_t heartbeat_interval_ms = 1'000;
  // Seed for retry jitter; fixed in tests.
  uint64_t seed = 0;
  // Progress rate smoothing time constant.
  int64_t rate_tau_ms = 30'000;
  // How long a ReadLog waits for the agent's answer.
  int64_t log_timeout_ms = 10'000;
  // longhauld --new-cluster: an agent that served another cluster adopts this store's cluster
  // id (Welcome.new_cluster) instead of being refused (docs/coordinator.md, "Identity").
  bool new_cluster = false;
  // Quarantined GPUs: the cool-down before a pre-flight, and the passes to return.
  GpuFleetOptions gpus;
  // A service without its own gpu_idle whose GPUs sit idle this long while a consumer of it
  // runs (and so sends it requests) is hung (docs/gpus.md, "Idle GPUs"); 0: never.
  int64_t gpu_service_hang_ms = 15 * 60 * 1000;
  // Quotas of teams and users (longhauld --quota; docs/scheduling.md, "Quotas"), and the
  // half-life of past use in the fair-share order (--fair-share-half-life); 0: no fair share.
  Quotas quotas;
  int64_t fair_share_half_life_ms = 0;
  // Budgets of teams and workflow names from the configuration (--budget, `budget:` in
  // longhauld.yaml), stored at start where none is (budget_config.h).
  std::vector<ConfigBudget> budgets;
};

}  // namespace longhaul::scheduler

// What longhaul-agent counts for Prometheus (docs/operations.md, "Agent metrics"), and the
// text it serves at /metrics on --metrics-listen.
//
// The agent's event loop writes these (atomics, relaxed: each value stands alone); the
// metrics listener's thread reads them and renders the text, so a scrape never waits on the
// loop and the loop never waits on a scrape. The counters start at 0 when the agent starts.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/clock.h"
#include "core/net/text_http_server.h"
#include "core/status.h"

namespace longhaul::agent {

struct AgentMetrics {
  // Gauges, refreshed by the loop when an attempt starts or ends and at every heartbeat.
  std::atomic<int64_t> attempts_running{0};
  std::atomic<int64_t> events_in_flight{0};  // sent, not yet acknowledged
  // When the oldest event sent and not yet acknowledged was read from its events.jsonl
  // (ms since the epoch); 0 when none is. Refreshed at every heartbeat.
  std::atomic<int64_t> oldest_unacked_read_ms{0};
  std::atomic<int> connected{0};  // a stream to the coordinator is open
  std::atomic<int> disk_full{0};  // the state dir counts as full (DiskWatch)
  // Disk space of STATE/attempts, measured off the loop every --metrics-disk-interval; -1
  // until the first measurement ends.
  std::atomic<int64_t> attempt_dir_bytes{-1};

  // Counters.
  std::atomic<uint64_t> attempts_started{0};  // a stage began running (its pid.json appeared)
  std::atomic<uint64_t> attempts_exited{0};   // an end was recorded, start failures included
  std::atomic<uint64_t> events_read{0};       // event lines read from events.jsonl files
  std::atomic<uint64_t> events_sent{0};       // event lines sent to the coordinator
  std::atomic<uint64_t> events_acked{0};      // of those, acknowledged by the coordinator
};

// The text exposition format (0.0.4) of `m`, with the event lag as of `now_ms` and the free
// space of the file system that holds `state_dir` (statvfs, read now; left out when statvfs
// fails). Thread-safe.
std::string RenderAgentMetrics(const AgentMetrics& m, const std::string& state_dir, int64_t now_ms);

// Serves GET /metrics (RenderAgentMetrics of `m`, the lag by `clock`, then the text of `more`
// when given, e.g. the GPU families of gpu_metrics.h; called on the listener's thread) and GET
// /healthz ("ok") on `server`, bound to `listen`; writes the bound "HOST:PORT" to
// STATE/metrics.addr and logs it, with a warning when `listen` is not a loopback address (anyone
// who reaches it may read the counts). `m` and `clock` must outlive server->Stop(). Errors: a bad
// or busy address (named as --metrics-listen), an unwritable STATE/metrics.addr.
Result<std::string> ServeAgentMetrics(TextHttpServer* server, const std::string& listen,
                                      const AgentMetrics& m, const std::string& state_dir,
                                      Clock* clock, std::function<std::string()> more = nullptr);

}  // namespace longhaul::agent

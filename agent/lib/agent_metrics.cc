#include "agent/lib/agent_metrics.h"

#include <sys/statvfs.h>

#include <algorithm>

#include "core/fs.h"
#include "core/logging.h"
#include "core/metrics.h"
#include "core/net/listen_address.h"
#include "core/strings.h"

namespace longhaul::agent {

std::string RenderAgentMetrics(const AgentMetrics& m, const std::string& state_dir,
                               int64_t now_ms) {
  auto d = [](auto v) { return static_cast<double>(v); };
  metrics::TextWriter w;
  w.Single("longhaul_agent_connected", "gauge",
           "1 while a stream to the coordinator is open, else 0.", m.connected.load());
  w.Single("longhaul_agent_attempts_running", "gauge", "Attempts of this agent whose stage runs.",
           d(m.attempts_running.load()));
  w.Single("longhaul_agent_attempts_started_total", "counter",
           "Attempts whose stage started under this agent process.", d(m.attempts_started.load()));
  w.Single("longhaul_agent_attempts_exited_total", "counter",
           "Attempts whose end this agent process recorded, start failures included.",
           d(m.attempts_exited.load()));
  w.Single("longhaul_agent_events_read_total", "counter",
           "Event lines read from the attempts' events.jsonl files (re-reads included).",
           d(m.events_read.load()));
  w.Single("longhaul_agent_events_sent_total", "counter",
           "Event lines sent to the coordinator (re-sends after a reconnect included).",
           d(m.events_sent.load()));
  w.Single("longhaul_agent_events_acked_total", "counter",
           "Event lines the coordinator acknowledged.", d(m.events_acked.load()));
  w.Single("longhaul_agent_events_in_flight", "gauge", "Event lines sent and not yet acknowledged.",
           d(m.events_in_flight.load()));
  int64_t oldest = m.oldest_unacked_read_ms.load();
  w.Single("longhaul_agent_event_lag_seconds", "gauge",
           "Age of the oldest event line sent and not yet acknowledged, from when it was read; "
           "0 when none is.",
           oldest > 0 ? std::max<int64_t>(0, now_ms - oldest) / 1000.0 : 0.0);
  w.Family("longhaul_agent_attempt_dir_bytes", "gauge",
           "Disk space of the attempt directories (STATE/attempts), measured periodically.");
  if (int64_t bytes = m.attempt_dir_bytes.load(); bytes >= 0) {
    w.Sample("longhaul_agent_attempt_dir_bytes", {}, d(bytes));
  }
  w.Single("longhaul_agent_disk_full", "gauge",
           "1 while the state dir counts as full (below --disk-min-free, or a write failed "
           "with ENOSPC), else 0.",
           d(m.disk_full.load()));
  w.Family("longhaul_agent_state_free_bytes", "gauge",
           "Bytes available to the agent on the file system of its state directory.");
  if (struct statvfs vfs; ::statvfs(state_dir.c_str(), &vfs) == 0) {
    w.Sample("longhaul_agent_state_free_bytes", {}, d(vfs.f_bavail) * d(vfs.f_frsize));
  }
  return w.text();
}

Result<std::string> ServeAgentMetrics(TextHttpServer* server, const std::string& listen,
                                      const AgentMetrics& m, const std::string& state_dir,
                                      Clock* clock, std::function<std::string()> more) {
  server->Handle("/metrics", [&m, state_dir, clock, more = std::move(more)] {
    std::string text = RenderAgentMetrics(m, state_dir, clock->NowMs());
    if (more) text += more();
    return TextResponse{200, metrics::kTextFormatContentType, std::move(text)};
  });
  server->Handle("/healthz", [] { return TextResponse{200, "text/plain; charset=utf-8", "ok"}; });
  Result<std::string> bound = server->Start(listen);
  if (!bound.ok()) return Annotate(bound.status(), "--metrics-listen");
  RETURN_IF_ERROR(WriteFileAtomic(state_dir + "/metrics.addr", *bound + "\n"));
  auto log = GetLogger("agent");
  log->info("metrics on http://{}/metrics", *bound);
  if (auto ep = ParseListenAddress(listen); ep.ok() && !ep->address().is_loopback()) {
    log->warn(
        "--metrics-listen {} is not a loopback address: /metrics has no authentication, "
        "so anyone who can reach it can read this agent's counts",
        listen);
  }
  return bound;
}

}  // namespace longhaul::agent

// longhaul-agent: flags, logging and wiring only; see agent/lib/agent.h and docs/agent.md.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "agent/lib/agent.h"
#include "agent/lib/agent_setup.h"
#include "agent/lib/coordinator_session.h"
#include "agent/lib/inventory.h"
#include "agent/lib/posix_spawn_launcher.h"
#include "agent/lib/slurm_runner.h"
#include "core/clock.h"
#include "core/duration.h"
#include "core/fs.h"
#include "core/logging.h"
#include "core/strings.h"

namespace {

constexpr char kVersion[] = "0.1.0";

int Fail(const std::string& what) {
  std::cerr << "longhaul-agent: " << what << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace longhaul;
  using namespace longhaul::agent;
  CLI::App app{"longhaul-agent: runs longhaul stages on this node for a coordinator"};
  const char* env_coord = std::getenv("LONGHAUL_COORDINATOR");
  std::string coordinator = env_coord ? env_coord : "";
  std::string state_dir, data_dir, id, memory, heartbeat = "1s", keepalive = "30s", shim,
                                               log_level = "info", log_file;
  std::optional<double> cpus;
  std::optional<int> gpus;
  std::vector<std::string> labels;
  int64_t window = 20'000;
  int64_t max_event_rate = 5'000;
  std::string tls_cert, tls_key, tls_ca;
  std::string executor = "local", signal_lead = "60s";
  SlurmOptions slurm;
  app.add_option("--coordinator", coordinator, "HOST:PORT ($LONGHAUL_COORDINATOR)");
  app.add_option("--state-dir", state_dir, "the agent's state directory")->required();
  app.add_option("--data-dir", data_dir, "where output dirs are made (default STATE/data)");
  app.add_option("--id", id, "agent id (default: stored in STATE/agent_id, else host name)");
  app.add_option("--cpus", cpus, "CPUs to offer (default: the affinity mask)");
  app.add_option("--memory", memory, "memory to offer, e.g. 16G (default: MemTotal)");
  app.add_option("--gpus", gpus, "GPUs to offer (default: what nvidia-smi lists)");
  app.add_option("--label", labels,
                 "KEY=VALUE label (repeatable); a stage's node_selector picks agents by them");
  app.add_option("--heartbeat", heartbeat, "heartbeat interval (default 1s)");
  app.add_option("--keepalive", keepalive, "HTTP/2 keepalive ping interval, 0 = off (default 30s)");
  app.add_option("--shim", shim, "longhaul-shim to use (default: beside this executable)");
  app.add_option("--event-window", window, "unacknowledged events in flight (default 20000)");
  app.add_option("--max-event-rate", max_event_rate,
                 "events one attempt may send per second, 0 = no limit; faster stages wait in "
                 "their events file (default 5000)");
  app.add_option("--tls-cert", tls_cert,
                 "PEM certificate of this agent, from the cluster CA; it names the agent's id");
  app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert");
  app.add_option("--tls-ca", tls_ca, "PEM CA that signed the coordinator's certificate");
  app.add_option("--executor", executor, "local (processes on this node) or slurm (docs/slurm.md)")
      ->check(CLI::IsMember({"local", "slurm"}));
  app.add_option("--slurm-partition", slurm.partition, "sbatch --partition");
  app.add_option("--slurm-account", slurm.account, "sbatch --account");
  app.add_option("--slurm-arg", slurm.extra_args, "an extra sbatch argument (repeatable)");
  app.add_option("--slurm-signal-lead", signal_lead,
                 "USR1 to the shim this long before Slurm's time limit (default 60s)");
  app.add_flag("--slurm-gres-gpus", slurm.gres_gpus,
               "the cluster has GPUs as gres: ask for them with --gres=gpu:N");
  app.add_option("--log-level", log_level, "debug, info, warn or error");
  app.add_option("--log-file", log_file, "also log to this file");
  CLI11_PARSE(app, argc, argv);

  SetupLogging(log_level, log_file);
  auto log = GetLogger("agent");
  if (coordinator.empty())
    return Fail("--coordinator HOST:PORT (or $LONGHAUL_COORDINATOR) is required");
  if (Status s = CheckHostPort(coordinator); !s.ok()) return Fail(ToStd(s.message()));
  auto heartbeat_ms = ParseDurationMs(heartbeat);
  if (!heartbeat_ms.ok() || *heartbeat_ms <= 0)
    return Fail("--heartbeat '" + heartbeat + "': expected a duration such as 1s");
  auto keepalive_ms = ParseDurationMs(keepalive);
  if (!keepalive_ms.ok())
    return Fail("--keepalive '" + keepalive + "': expected a duration such as 5m or 0");
  if (window <= 0) return Fail("--event-window must be positive");
  if (max_event_rate < 0) return Fail("--max-event-rate must not be negative");
  if (tls_cert.empty() != tls_key.empty() || tls_cert.empty() != tls_ca.empty())
    return Fail("--tls-cert, --tls-key and --tls-ca go together");
  if (cpus && !(*cpus > 0)) return Fail("--cpus must be positive");
  auto lead_ms = ParseDurationMs(signal_lead);
  if (!lead_ms.ok() || *lead_ms < 0 || *lead_ms > 65'535'000)
    return Fail("--slurm-signal-lead '" + signal_lead + "': expected a duration up to 65535s");
  slurm.signal_lead_s = *lead_ms / 1000;
  if (gpus && *gpus < 0) return Fail("--gpus must not be negative");

  InventoryOverrides overrides;
  overrides.cpus = cpus;
  overrides.gpus = gpus;
  if (!memory.empty()) {
    auto bytes = ParseMemorySize(memory);
    if (!bytes.ok()) return Fail(ToStd(bytes.status().message()));
    overrides.memory_bytes = *bytes;
  }
  if (Status s = MakeDirs(state_dir); !s.ok()) return Fail(ToStd(s.message()));
  auto lock = LockStateDir(state_dir);
  if (!lock.ok()) return Fail(ToStd(lock.status().message()));
  auto agent_id = ResolveAgentId(state_dir, id);
  if (!agent_id.ok()) return Fail(ToStd(agent_id.status().message()));

  AgentConfig config;
  config.agent_id = *agent_id;
  config.hostname = Hostname();
  config.version = kVersion;
  config.state_dir = state_dir;
  config.data_dir = data_dir.empty() ? state_dir + "/data" : data_dir;
  config.bin_dir = SelfBinDir();
  config.shim_path = shim.empty() ? config.bin_dir + "/longhaul-shim" : shim;
  config.heartbeat_ms = *heartbeat_ms;
  config.event_window = window;
  config.max_event_rate = max_event_rate;
  for (const auto& l : labels) {
    auto kv = ParseLabel(l);
    if (!kv.ok()) return Fail(ToStd(kv.status().message()));
    config.labels[kv->first] = kv->second;
  }
  Inventory inv = DetectInventory(overrides);
  for (const auto& note : inv.notes) log->warn("{}", note);
  for (const auto& g : inv.gpu_list) {
    log->info("GPU {}: {} ({} MiB)", g.index, g.name, g.memory_mib);
    v1::GpuInfo& info = config.gpus.emplace_back();
    info.set_index(g.index);
    info.set_name(g.name);
    info.set_memory_bytes(g.memory_mib * 1024 * 1024);
  }
  config.resources.set_cpus(inv.cpus);
  config.resources.set_memory_bytes(inv.memory_bytes);
  config.resources.set_gpus(inv.gpus);
  if (::access(config.shim_path.c_str(), X_OK) != 0) {
    log->warn("{} is not executable; every attempt will fail to start", config.shim_path);
  }

  boost::asio::io_context io;
  PosixSpawnLauncher launcher;
  SlurmRunner slurm_runner(slurm);
  Agent* agent_ptr = nullptr;
  SessionOptions so;
  so.target = coordinator;
  so.keepalive_ms = *keepalive_ms;
  so.keepalive_timeout_ms = std::min<int64_t>(10'000, *keepalive_ms);
  for (auto [path, pem] : {std::pair{&tls_ca, &so.tls_ca_pem},
                           std::pair{&tls_cert, &so.tls_cert_pem},
                           std::pair{&tls_key, &so.tls_key_pem}}) {
    if (path->empty()) continue;
    auto text = ReadFile(*path);
    if (!text.ok()) return Fail(ToStd(text.status().message()));
    *pem = std::move(*text);
  }
  CoordinatorSession session(
      so,
      CoordinatorSession::Callbacks{
          [&](uint64_t gen) { boost::asio::post(io, [&, gen] { agent_ptr->OnStreamOpen(gen); }); },
          [&](uint64_t gen, v1::CoordinatorMessage m) {
            boost::asio::post(io, [&, gen, m = std::move(m)] { agent_ptr->OnMessage(gen, m); });
          },
          [&](uint64_t gen, std::string) {
            boost::asio::post(io, [&, gen] { agent_ptr->OnStreamClosed(gen); });
          }});
  std::optional<Agent> agent_holder;
  if (executor == "slurm") {
    agent_holder.emplace(io, config, static_cast<AttemptRunner*>(&slurm_runner), &session,
                         SystemClock::Get());
  } else {
    agent_holder.emplace(io, config, &launcher, &session, SystemClock::Get());
  }
  Agent& agent = *agent_holder;
  agent_ptr = &agent;
  if (Status s = agent.Start(); !s.ok()) return Fail(ToStd(s.message()));
  log->info("agent {} ({} CPUs, {} bytes, {} GPUs, executor {}) for coordinator {}{}; state {}",
            config.agent_id, inv.cpus, inv.memory_bytes, inv.gpus, executor, coordinator,
            tls_ca.empty() ? "" : " (mutual TLS)", state_dir);
  session.Start();

  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    log->info("signal {}: stopping; stages keep running and are re-adopted at the next start", sig);
    agent.Shutdown();
    io.stop();
  });
  io.run();
  session.Stop();
  return 0;
}

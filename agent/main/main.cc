// longhaul-agent: flags, logging and wiring only; see agent/lib/agent.h and docs/agent.md.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <iostream>
#include <optional>
#include <thread>

#include "agent/gpu/gpu_backend.h"
#include "agent/gpu/gpu_metrics.h"
#include "agent/gpu/gpu_report.h"
#include "agent/gpu/gpu_sampler.h"
#include "agent/gpu/kernel_log_xids.h"
#include "agent/lib/agent.h"
#include "agent/lib/agent_flags.h"
#include "agent/lib/agent_metrics.h"
#include "agent/lib/agent_setup.h"
#include "agent/lib/cgroup.h"
#include "agent/lib/coordinator_session.h"
#include "agent/lib/inventory.h"
#include "agent/lib/posix_spawn_launcher.h"
#include "agent/lib/slurm_runner.h"
#include "core/clock.h"
#include "core/command.h"
#include "core/fs.h"
#include "core/logging.h"
#include "core/net/text_http_server.h"
#include "core/rlimit.h"
#include "core/strings.h"

namespace {

// --gpu-check's words (split on spaces; empty words dropped).
std::vector<std::string> GpuCheckArgv(const std::string& command) {
  std::vector<std::string> argv;
  for (std::string& w : longhaul::StrSplit(command, ' ')) {
    if (!w.empty()) argv.push_back(std::move(w));
  }
  return argv;
}

constexpr char kVersion[] = "0.1.0";

int Fail(const std::string& what) {
  std::cerr << "longhaul-agent: " << what << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace longhaul;
  using namespace longhaul::agent;
  RaiseOpenFileLimit();  // a few descriptors per running attempt
  CLI::App app{"longhaul-agent: runs longhaul stages on this node for a coordinator"};
  AgentFlags flags;
  AddAgentFlags(app, &flags);
  config::CliConfig file(app, kAgentConfigPath);
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> errors = file.Apply();
  for (auto& e : CheckAgentFlags(&flags, file)) errors.push_back(std::move(e));
  if (!errors.empty()) {
    for (const auto& e : errors) std::cerr << "longhaul-agent: " << e << "\n";
    return 2;
  }
  if (file.check_only()) {
    std::cout << file.Effective();
    return 0;
  }
  const std::string& state_dir = flags.state_dir;
  const std::string& coordinator = flags.coordinator;
  const std::string& executor = flags.executor;
  const std::string& tls_ca = flags.tls_ca;

  SetupLogging(flags.log_level, flags.log_file);
  auto log = GetLogger("agent");
  if (Status s = MakeDirs(state_dir); !s.ok()) return Fail(ToStd(s.message()));
  auto lock = LockStateDir(state_dir);
  if (!lock.ok()) return Fail(ToStd(lock.status().message()));
  auto agent_id = ResolveAgentId(state_dir, flags.id);
  if (!agent_id.ok()) return Fail(ToStd(agent_id.status().message()));

  AgentConfig config;
  config.agent_id = *agent_id;
  config.hostname = Hostname();
  config.version = kVersion;
  config.state_dir = state_dir;
  config.coordinator = coordinator;
  config.data_dir = flags.data_dir.empty() ? state_dir + "/data" : flags.data_dir;
  config.bin_dir = SelfBinDir();
  config.preflight_argv = GpuCheckArgv(flags.gpu_check);
  config.shim_path = flags.shim.empty() ? config.bin_dir + "/longhaul-shim" : flags.shim;
  config.heartbeat_ms = flags.heartbeat_ms;
  config.native_poll_ms = flags.poll_ms;
  config.native_poll_max_ms = flags.poll_max_ms;
  config.event_window = flags.event_window;
  config.max_event_rate = flags.max_event_rate;
  if (!flags.metrics_listen.empty()) config.disk_usage_interval_ms = flags.metrics_disk_interval_ms;
  config.disk_min_free_bytes = flags.disk_min_free_bytes;
  for (const auto& [k, v] : flags.label_map) config.labels[k] = v;
  config.advertise_host = flags.advertise_host;
  config.shared_paths = flags.shared_paths;
  GpuBackendChoice gpu = ChooseGpuBackend(flags.nvml_library);
  for (const auto& note : gpu.notes) log->warn("{}", note);
  KernelLogXids kernel_xids = AddKernelLogXids(std::move(gpu.backend), flags.kmsg);
  gpu.backend = std::move(kernel_xids.backend);
  if (kernel_xids.warn) {
    log->warn("{}", kernel_xids.note);
  } else {
    log->info("{}", kernel_xids.note);
  }
  Inventory inv = DetectInventory(flags.overrides, gpu.backend->devices());
  for (const auto& note : inv.notes) log->warn("{}", note);
  for (const auto& g : inv.gpu_list) {
    log->info("GPU {}: {} {} ({} MiB), through {}", g.index, g.name, g.uuid, g.memory_mib,
              gpu.backend->name());
    v1::GpuInfo& info = config.gpus.emplace_back();
    info.set_index(g.index);
    info.set_name(g.name);
    info.set_uuid(g.uuid);
    info.set_memory_bytes(g.memory_mib * 1024 * 1024);
  }
  config.resources.set_cpus(inv.cpus);
  config.resources.set_memory_bytes(inv.memory_bytes);
  config.resources.set_gpus(inv.gpus);
  if (executor == "local") {
    AttemptCgroups cgroups = SetUpAttemptCgroups(flags.cgroup_root);
    config.cgroup_parent = cgroups.parent;
    if (cgroups.parent.empty() && flags.cgroup_root != "none") {
      log->warn("{}", cgroups.note);
    } else {
      log->info("{}", cgroups.note);
    }
  }
  if (::access(config.shim_path.c_str(), X_OK) != 0) {
    log->warn("{} is not executable; every attempt will fail to start", config.shim_path);
  }

  boost::asio::io_context io;
  PosixSpawnLauncher launcher;
  SlurmRunner slurm_runner(flags.slurm);
  Agent* agent_ptr = nullptr;
  SessionOptions so;
  so.target = coordinator;
  so.keepalive_ms = flags.keepalive_ms;
  so.keepalive_timeout_ms = std::min<int64_t>(10'000, flags.keepalive_ms);
  for (auto [path, pem] :
       {std::pair{&flags.tls_ca, &so.tls_ca_pem}, std::pair{&flags.tls_cert, &so.tls_cert_pem},
        std::pair{&flags.tls_key, &so.tls_key_pem}}) {
    if (path->empty()) continue;
    auto text = ReadFile(*path);
    if (!text.ok()) return Fail(ToStd(text.status().message()));
    *pem = std::move(*text);
  }
  std::string refused;  // the coordinator's refusal of this agent, if it came
  CoordinatorSession session(
      so,
      CoordinatorSession::Callbacks{
          [&](uint64_t gen) { boost::asio::post(io, [&, gen] { agent_ptr->OnStreamOpen(gen); }); },
          [&](uint64_t gen, v1::CoordinatorMessage m) {
            boost::asio::post(io, [&, gen, m = std::move(m)] { agent_ptr->OnMessage(gen, m); });
          },
          [&](uint64_t gen, std::string) {
            boost::asio::post(io, [&, gen] { agent_ptr->OnStreamClosed(gen); });
          },
          [&](std::string why) {
            boost::asio::post(io, [&, why = std::move(why)] { agent_ptr->Refuse(why); });
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
  int exit_code = 0;
  agent.set_on_refused([&](const std::string& why) {
    // Another cluster's coordinator, or another live agent with this id: stop, so that neither
    // side acts on the other's attempts. Stages keep running, for the coordinator they
    // belong to.
    refused = why;
    exit_code = 3;
    agent.Shutdown();
    io.stop();
  });
  if (Status s = agent.Start(); !s.ok()) return Fail(ToStd(s.message()));
  log->info("agent {} ({} CPUs, {} bytes, {} GPUs, executor {}) for coordinator {}{}; state {}",
            config.agent_id, inv.cpus, inv.memory_bytes, inv.gpus, executor, coordinator,
            tls_ca.empty() ? "" : " (mutual TLS)", state_dir);
  // Sampled on its own thread; the last sample of each GPU stays in `gpus` (docs/gpus.md).
  std::unique_ptr<GpuSampler> gpus;
  if (flags.gpu_sample_ms > 0) {
    gpus = std::make_unique<GpuSampler>(std::move(gpu.backend), flags.xids, SystemClock::Get(),
                                        flags.gpu_sample_ms);
    // Each sample goes to the coordinator, which takes unhealthy GPUs out of service.
    gpus->set_on_sample([&io, &agent, xids = &gpus->xids()](std::vector<GpuState> states) {
      v1::GpuReport report = MakeGpuReport(states, *xids);
      boost::asio::post(io, [&agent, report = std::move(report)]() mutable {
        agent.SendGpuReport(std::move(report));
      });
    });
    agent.set_gpu_check([&gpus, argv = GpuCheckArgv(flags.gpu_check), bin_dir = config.bin_dir](
                            int index, Agent::GpuCheckDone done) {
      std::thread([&gpus, argv, bin_dir, index, done = std::move(done)] {
        // The GPU as a stage placed on it sees it: CUDA_VISIBLE_DEVICES=INDEX, device 0.
        std::vector<std::string> cmd = argv;
        cmd.push_back("--gpus");
        cmd.push_back("0");
        // Found beside the agent first, as the stage binaries are.
        if (!cmd.empty() && cmd[0].find('/') == std::string::npos &&
            ::access((bin_dir + "/" + cmd[0]).c_str(), X_OK) == 0) {
          cmd[0] = bin_dir + "/" + cmd[0];
        }
        CommandInput in;
        in.env["CUDA_VISIBLE_DEVICES"] = std::to_string(index);
        Result<CommandResult> r = RunCommand(cmd, 10 * 60 * 1000, in);
        if (!r.ok()) return done(false, ToStd(r.status().message()));
        std::string out = std::string(StripWhitespace(r->out + "\n" + r->err));
        if (out.size() > 2000) out = "..." + out.substr(out.size() - 2000);
        if (r->exit_code != 0) {
          return done(false, StrCat(CommandLine(cmd), " exited ", r->exit_code, ": ", out));
        }
        gpus->ClearHealth(index);
        done(true, out);
      }).detach();
    });
    gpus->Start();
  }
  TextHttpServer metrics_server;
  if (!flags.metrics_listen.empty()) {
    std::function<std::string()> gpu_text;
    if (gpus) {
      gpu_text = [&gpus, host = config.hostname] {
        metrics::TextWriter w;
        WriteGpuMetrics(*gpus, host, w);
        return w.text();
      };
    }
    auto metrics = ServeAgentMetrics(&metrics_server, flags.metrics_listen, agent.metrics(),
                                     state_dir, SystemClock::Get(), std::move(gpu_text));
    if (!metrics.ok()) return Fail(ToStd(metrics.status().message()));
  }
  session.Start();

  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    log->info("signal {}: stopping; stages keep running and are re-adopted at the next start", sig);
    agent.Shutdown();
    io.stop();
  });
  io.run();
  metrics_server.Stop();
  session.Stop();
  // The refusal, also as the last line on stderr (the log may go to a file).
  if (!refused.empty()) Fail(refused);
  return exit_code;
}

#include "agent/lib/agent_flags.h"

#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "agent/lib/agent_setup.h"
#include "agent/lib/slurm_classes.h"
#include "core/config/config_checks.h"
#include "core/duration.h"
#include "core/net/listen_address.h"
#include "core/path_prefix.h"
#include "core/strings.h"

namespace longhaul::agent {

void AddAgentFlags(CLI::App& app, AgentFlags* f) {
  const char* env_coord = std::getenv("LONGHAUL_COORDINATOR");
  if (env_coord != nullptr) f->coordinator = env_coord;
  app.add_option("--coordinator", f->coordinator, "HOST:PORT ($LONGHAUL_COORDINATOR)");
  app.add_option("--state-dir", f->state_dir, "the agent's state directory (required)");
  app.add_option("--data-dir", f->data_dir, "where output dirs are made (default STATE/data)");
  app.add_option("--id", f->id, "agent id (default: stored in STATE/agent_id, else host name)");
  app.add_option("--cpus", f->cpus, "CPUs to offer (default: the affinity mask)");
  app.add_option("--memory", f->memory, "memory to offer, e.g. 16G (default: MemTotal)");
  app.add_option("--gpus", f->gpus, "GPUs to offer (default: what NVML, else nvidia-smi, finds)");
  app.add_option("--label", f->labels,
                 "KEY=VALUE label (repeatable); a stage's node_selector picks agents by them");
  app.add_option("--advertise-host", f->advertise_host,
                 "this node's address as other nodes reach it, given to stages as "
                 "$LONGHAUL_ADVERTISE_HOST (lh-serve binds it and puts it in its endpoint)");
  app.add_option("--shared-path", f->shared_paths,
                 "a path prefix mounted here as on the other agents that declare it, e.g. a "
                 "cluster file system (repeatable): outputs under it may be read by stages on "
                 "those agents, other outputs keep their consumers on this agent");
  app.add_option("--heartbeat", f->heartbeat, "heartbeat interval (default 1s)");
  app.add_option("--keepalive", f->keepalive,
                 "HTTP/2 keepalive ping interval, 0 = off (default 30s)");
  app.add_option("--disk-min-free", f->disk_min_free,
                 "the state dir counts as full below this many free bytes, e.g. 16M (default 16M)");
  app.add_option("--shim", f->shim, "longhaul-shim to use (default: beside this executable)");
  app.add_option("--event-window", f->event_window,
                 "unacknowledged events in flight (default 20000)");
  app.add_option("--max-event-rate", f->max_event_rate,
                 "events one attempt may send per second, 0 = no limit; faster stages wait in "
                 "their events file (default 5000)");
  app.add_option("--tls-cert", f->tls_cert,
                 "PEM certificate of this agent, from the cluster CA; it names the agent's id");
  app.add_option("--tls-key", f->tls_key, "PEM private key of --tls-cert");
  app.add_option("--tls-ca", f->tls_ca, "PEM CA that signed the coordinator's certificate");
  app.add_option("--executor", f->executor,
                 "local (processes on this node) or slurm (docs/slurm.md)")
      ->check(CLI::IsMember({"local", "slurm"}));
  app.add_option("--slurm-partition", f->slurm.partition, "sbatch --partition");
  app.add_option("--slurm-account", f->slurm.account, "sbatch --account");
  app.add_option("--slurm-arg", f->slurm.extra_args, "an extra sbatch argument (repeatable)");
  app.add_option("--slurm-class-qos", f->class_qos,
                 "CLASS=QOS[,CLASS=QOS...]: sbatch --qos for the jobs of runs of a priority "
                 "class (high, normal, low); repeatable");
  app.add_option("--slurm-class-partition", f->class_partition,
                 "CLASS=PARTITION[,...]: sbatch --partition for the jobs of runs of a priority "
                 "class, instead of --slurm-partition; repeatable");
  app.add_option("--slurm-signal-lead", f->signal_lead,
                 "USR1 to the shim this long before Slurm's time limit (default 60s)");
  app.add_option("--slurm-poll", f->poll,
                 "squeue this long after a submit or a change of state, doubling while nothing "
                 "changes (default 15s)");
  app.add_option("--slurm-poll-max", f->poll_max,
                 "the longest wait between two squeue calls (default 2m)");
  app.add_flag("--slurm-gres-gpus", f->slurm.gres_gpus,
               "the cluster has GPUs as gres: ask for them with --gres=gpu:N");
  app.add_option("--metrics-listen", f->metrics_listen,
                 "HOST:PORT of /metrics and /healthz, port 0 = any free one (written to "
                 "STATE/metrics.addr); no authentication (default: off)");
  app.add_option("--metrics-disk-interval", f->metrics_disk_interval,
                 "how often /metrics measures the attempt dirs (default 1m)");
  app.add_option("--nvml-library", f->nvml_library,
                 "NVML to load at run time, a name or a path; when it does not load the agent "
                 "says so and reads GPUs with nvidia-smi (default libnvidia-ml.so.1)");
  app.add_option("--gpu-sample", f->gpu_sample,
                 "how often each GPU is sampled for /metrics and health, 0 = never (default 5s)");
  app.add_option("--gpu-check", f->gpu_check,
                 "the pre-flight a quarantined GPU must pass to return to service, run when the "
                 "coordinator asks, with CUDA_VISIBLE_DEVICES=INDEX and --gpus 0 (default "
                 "\"lh-gpucheck --quick\")");
  app.add_option("--kmsg", f->kmsg,
                 "the kernel log read for the XIDs of GPUs without NVML XID events, followed "
                 "from the agent's start; \"\" = off (default /dev/kmsg)");
  app.add_option("--xid-table", f->xid_table,
                 "a CSV of xid,class,description replacing or adding to the built-in XID "
                 "classes (docs/gpus.md)");
  app.add_option("--cgroup-root", f->cgroup_root,
                 "where each attempt gets a cgroup (v2) of its own, killed whole at its end: "
                 "auto (below the agent's own cgroup), none, or a writable cgroup2 directory "
                 "(default auto)");
  app.add_option("--log-level", f->log_level, "debug, info, warn or error");
  app.add_option("--log-file", f->log_file, "also log to this file");
}

std::vector<std::string> CheckAgentFlags(AgentFlags* f, const config::CliConfig& config) {
  std::vector<std::string> errors;
  auto fail = [&](std::string_view key, std::string_view message) {
    errors.push_back(config.Error(key, message));
  };
  auto check = [&](std::string_view key, const Status& s) {
    if (!s.ok()) fail(key, ToStd(s.message()));
  };
  if (f->coordinator.empty()) {
    fail("coordinator", "required: HOST:PORT (or $LONGHAUL_COORDINATOR)");
  } else {
    check("coordinator", CheckHostPort(f->coordinator));
  }
  // Made absolute here, against the directory the agent was started in: the paths under them
  // go to the shim and the stages, which run in their own working directories (a relative
  // --state-dir had every attempt fail to start, the shim exiting with 75).
  auto absolute = [](std::string* dir) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(*dir, ec);
    if (!ec) *dir = TrimTrailingSlashes(p.lexically_normal().string());
  };
  if (f->state_dir.empty()) {
    fail("state-dir", "required: the agent's state directory");
  } else {
    check("state-dir", CheckDirUsable(f->state_dir));
    absolute(&f->state_dir);
  }
  if (!f->data_dir.empty()) {
    check("data-dir", CheckDirUsable(f->data_dir));
    absolute(&f->data_dir);
  }
  auto heartbeat_ms = ParseDurationMs(f->heartbeat);
  if (!heartbeat_ms.ok() || *heartbeat_ms <= 0) {
    fail("heartbeat", "'" + f->heartbeat + "': expected a duration such as 1s");
  } else {
    f->heartbeat_ms = *heartbeat_ms;
  }
  auto keepalive_ms = ParseDurationMs(f->keepalive);
  if (!keepalive_ms.ok() || *keepalive_ms < 0) {
    fail("keepalive", "'" + f->keepalive + "': expected a duration such as 5m or 0");
  } else {
    f->keepalive_ms = *keepalive_ms;
  }
  if (!f->metrics_listen.empty()) {
    check("metrics-listen", ParseListenAddress(f->metrics_listen).status());
  }
  auto disk_ms = ParseDurationMs(f->metrics_disk_interval);
  if (!disk_ms.ok() || *disk_ms <= 0) {
    fail("metrics-disk-interval",
         "'" + f->metrics_disk_interval + "': expected a duration such as 1m");
  } else {
    f->metrics_disk_interval_ms = *disk_ms;
  }
  auto gpu_ms = ParseDurationMs(f->gpu_sample);
  if (!gpu_ms.ok() || *gpu_ms < 0) {
    fail("gpu-sample", "'" + f->gpu_sample + "': expected a duration such as 5s, or 0");
  } else {
    f->gpu_sample_ms = *gpu_ms;
  }
  if (auto xids = XidTable::BuiltinWithOverrides(f->xid_table); xids.ok()) {
    f->xids = *std::move(xids);
  } else {
    check("xid-table", xids.status());
  }
  if (f->event_window <= 0) fail("event-window", "must be positive");
  if (f->max_event_rate < 0) fail("max-event-rate", "must not be negative");
  if (f->tls_cert.empty() != f->tls_key.empty() || f->tls_cert.empty() != f->tls_ca.empty()) {
    fail("tls-cert", "--tls-cert, --tls-key and --tls-ca go together");
  }
  for (auto [key, path] : {std::pair{"tls-cert", &f->tls_cert}, std::pair{"tls-key", &f->tls_key},
                           std::pair{"tls-ca", &f->tls_ca}, std::pair{"log-file", &f->log_file}}) {
    if (path->empty()) continue;
    if (std::string_view(key) == "log-file") {
      auto slash = path->rfind('/');
      check(key, CheckDirUsable(slash == std::string::npos ? "." : path->substr(0, slash + 1)));
    } else {
      check(key, CheckReadable(*path));
    }
  }
  // A shim that is not executable is not an error here: the agent starts, warns, and reports
  // each attempt as a start failure (docs/agent.md).
  if (f->cpus && !(*f->cpus > 0)) fail("cpus", "must be positive");
  if (f->gpus && *f->gpus < 0) fail("gpus", "must not be negative");
  f->overrides.cpus = f->cpus;
  f->overrides.gpus = f->gpus;
  if (!f->memory.empty()) {
    auto bytes = ParseMemorySize(f->memory);
    if (bytes.ok()) {
      f->overrides.memory_bytes = *bytes;
    } else {
      check("memory", bytes.status());
    }
  }
  if (auto bytes = ParseMemorySize(f->disk_min_free); bytes.ok()) {
    f->disk_min_free_bytes = *bytes;
  } else {
    check("disk-min-free", bytes.status());
  }
  auto poll_ms = ParseDurationMs(f->poll);
  auto poll_max_ms = ParseDurationMs(f->poll_max);
  if (!poll_ms.ok() || *poll_ms <= 0) {
    fail("slurm-poll", "'" + f->poll + "': expected a positive duration");
  } else if (!poll_max_ms.ok() || *poll_max_ms < *poll_ms) {
    fail("slurm-poll-max", "'" + f->poll_max + "': expected a duration of at least --slurm-poll");
  } else {
    f->poll_ms = *poll_ms;
    f->poll_max_ms = *poll_max_ms;
  }
  auto lead_ms = ParseDurationMs(f->signal_lead);
  if (!lead_ms.ok() || *lead_ms < 0 || *lead_ms > 65'535'000) {
    fail("slurm-signal-lead", "'" + f->signal_lead + "': expected a duration up to 65535s");
  } else {
    f->slurm.signal_lead_s = *lead_ms / 1000;
  }
  for (auto [key, values, out, option, short_option] :
       {std::tuple{"slurm-class-qos", &f->class_qos, &f->slurm.class_qos, "--qos", "-q"},
        std::tuple{"slurm-class-partition", &f->class_partition, &f->slurm.class_partition,
                   "--partition", "-p"}}) {
    if (auto parsed = ParseSlurmClassMap(*values); !parsed.ok()) {
      check(key, parsed.status());
    } else if (!parsed->empty()) {
      *out = *std::move(parsed);
      check(key, CheckSlurmClassArgs(f->slurm.extra_args, option, short_option));
    }
  }
  for (const auto& l : f->labels) {
    auto kv = ParseLabel(l);
    if (kv.ok()) {
      f->label_map[kv->first] = kv->second;
    } else {
      check("label", kv.status());
    }
  }
  for (std::string& p : f->shared_paths) {
    if (p.empty() || p[0] != '/') {
      fail("shared-path", "'" + p + "': expected an absolute path such as /lustre");
      continue;
    }
    p = TrimTrailingSlashes(std::move(p));
  }
  check("log-level", CheckLogLevel(f->log_level));
  return errors;
}

}  // namespace longhaul::agent

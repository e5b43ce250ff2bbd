// longhaul-agent's flags and their config file keys (docs/operations.md, "Configuration
// reference"): declared on a CLI11 app, then checked all at once so that `--check-config`
// can list every problem. main() only adds these, parses and wires what they say.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/gpu/xid_table.h"
#include "agent/lib/inventory.h"
#include "agent/lib/slurm_runner.h"
#include "core/config/cli_config.h"

namespace longhaul::agent {

inline constexpr char kAgentConfigPath[] = "/etc/longhaul/agent.yaml";

struct AgentFlags {
  // As given (the coordinator defaults to $LONGHAUL_COORDINATOR).
  std::string coordinator, state_dir, data_dir, id, memory, shim;
  std::string heartbeat = "1s", keepalive = "30s", signal_lead = "60s";
  std::string poll = "15s", poll_max = "2m";  // --slurm-poll, --slurm-poll-max
  // --slurm-class-qos, --slurm-class-partition as given; parsed into `slurm`.
  std::vector<std::string> class_qos, class_partition;
  std::string disk_min_free = "16M";
  std::string log_level = "info", log_file;
  std::optional<double> cpus;
  std::optional<int> gpus;
  std::vector<std::string> labels;
  std::string advertise_host;             // empty: stages get no LONGHAUL_ADVERTISE_HOST
  std::vector<std::string> shared_paths;  // normalized by CheckAgentFlags
  int64_t event_window = 20'000;
  int64_t max_event_rate = 5'000;
  std::string tls_cert, tls_key, tls_ca;
  std::string executor = "local";
  std::string metrics_listen;  // empty: no metrics listener
  std::string metrics_disk_interval = "1m";
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string gpu_sample = "5s";
  std::string xid_table;             // empty: the built-in table only
  std::string kmsg = "/dev/kmsg";    // empty: XIDs are not read from the kernel log
  std::string cgroup_root = "auto";  // auto, none or a cgroup2 directory (cgroup.h)
  // The pre-flight run when the coordinator asks (CheckGpu), split on spaces; the agent runs
  // it with CUDA_VISIBLE_DEVICES=INDEX and `--gpus 0` added. Searched on the stages' PATH (the
  // agent's own directory first).
  std::string gpu_check = "lh-gpucheck --quick";
  SlurmOptions slurm;  // signal_lead_s and the class maps are filled by CheckAgentFlags

  // Filled by CheckAgentFlags when it returns no errors.
  int64_t heartbeat_ms = 0;
  int64_t keepalive_ms = 0;
  int64_t metrics_disk_interval_ms = 0;
  int64_t gpu_sample_ms = 0;  // 0: no GPU sampling
  XidTable xids;              // the built-in table with --xid-table over it
  int64_t poll_ms = 0, poll_max_ms = 0;
  int64_t disk_min_free_bytes = 0;
  InventoryOverrides overrides;
  std::map<std::string, std::string> label_map;
};

// Declares every flag of longhaul-agent on `app`, bound to `flags` (which must outlive it).
void AddAgentFlags(CLI::App& app, AgentFlags* flags);

// Checks the values after parsing and CliConfig::Apply() and converts them; each error names
// where its value came from (config.Error). Looks only: creates and opens nothing for writing.
std::vector<std::string> CheckAgentFlags(AgentFlags* flags, const config::CliConfig& config);

}  // namespace longhaul::agent

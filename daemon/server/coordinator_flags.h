// longhauld's flags and their config file keys (docs/operations.md, "Configuration
// reference"): declared on a CLI11 app, then checked all at once so that `--check-config`
// can list every problem. main() only adds these, parses and starts the Coordinator.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/config/cli_config.h"
#include "daemon/server/coordinator.h"

namespace longhaul::server {

inline constexpr char kCoordinatorConfigPath[] = "/etc/longhaul/longhauld.yaml";

struct CoordinatorFlags {
  CoordinatorOptions options;  // CheckCoordinatorFlags fills the durations' *_ms fields
  std::string agent_timeout = "15s", lost_after = "3m", heartbeat = "1s";
  std::string gpu_cooldown = "10m";
  std::string gpu_service_hang = "15m";
  std::string http_header_timeout = "10s", sse_heartbeat = "15s";
  std::string retention_age = "0", retention_interval = "1h";
  std::string notify_command, notify_on;  // split by CheckCoordinatorFlags
  std::string notify_backoff = "5s", notify_max_backoff = "5m", notify_timeout = "30s";
  std::string log_level = "info", log_file;
  std::vector<std::string> priority_allow;  // parsed into options.priority
  std::vector<std::string> quota;           // parsed into options.scheduler.quotas
  std::vector<std::string> teams;           // parsed into options.teams
  std::vector<std::string> budget;          // parsed into options.scheduler.budgets
  std::string fair_share_half_life = "0";
  std::string backup;  // --backup FILE: copy the database and exit (command line only)
};

// Declares every flag of longhauld on `app`, bound to `flags` (which must outlive it).
void AddCoordinatorFlags(CLI::App& app, CoordinatorFlags* flags);

// Checks the values after parsing and CliConfig::Apply(), and converts the durations:
// addresses, durations, that the state directory (and the database's) can be created, that
// the token and TLS files can be read. Each error names where its value came from
// (config.Error). Looks only: opens no database, binds nothing.
std::vector<std::string> CheckCoordinatorFlags(CoordinatorFlags* flags,
                                               const config::CliConfig& config);

// The listening rules of CheckSecurity/CheckHttpSecurity, for `--check-config`, as errors that
// name where `listen` and `http` came from. (A real start meets the same rules in
// Coordinator::Start(), which refuses with exit status 1.)
std::vector<std::string> CheckCoordinatorExposure(const CoordinatorFlags& flags,
                                                  const config::CliConfig& config);

}  // namespace longhaul::server

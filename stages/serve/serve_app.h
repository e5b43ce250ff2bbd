// lh-serve from flags to a running engine: find and load the profile, fill its variables
// (defaults < --model/--drafter/--host < --set), pick the port, render the command, and hand
// it to the supervisor.
#pragma once

#include <string>
#include <vector>

#include "core/event_writer.h"
#include "core/status.h"
#include "stages/serve/serve_supervisor.h"

namespace longhaul::stages {

struct ServeOptions {
  std::string profile;  // NAME or PATH
  std::string model;
  std::string drafter;
  std::string host;               // bind address; default the profile's or 127.0.0.1
  std::string advertise_host;     // host in the endpoint; default: see PrepareServe
  // The agent's --advertise-host ($LONGHAUL_ADVERTISE_HOST): where other nodes reach this one.
  std::string node_host;
  std::vector<std::string> sets;  // "key=value"
  std::vector<std::string> profiles_dirs;
  std::string log_dir = ".";
  bool echo = true;
  // Override the profile's timeouts (durations as in workflow files: "90s", "1h"); empty
  // keeps the profile's.
  std::string load_timeout;
  std::string probe_timeout;
  std::string stop_grace;
};

// The supervisor's configuration. The bind host is --host, else the profile's, else the node's
// address (`node_host`: itself when it is an IP address, 0.0.0.0 when it is a name), else
// 127.0.0.1. The endpoint's host is --advertise-host, else the bind host, else (for 0.0.0.0 /
// ::) the node's address or this machine's host name. Errors name the flag or the profile file
// and the variable.
Result<SupervisorConfig> PrepareServe(const ServeOptions& options, const std::string& exe_dir);

// `lh-serve --engine-version` (engine_version.cc): finds the profile as PrepareServe does, runs
// its version_command with `timeout_ms`, and returns the first line it printed. NotFound when
// the profile has none; FailedPrecondition when the command fails or prints nothing.
Result<std::string> EngineVersion(const ServeOptions& options, const std::string& exe_dir,
                                  int64_t timeout_ms);

// A free TCP port on `host` (bound to port 0, then released).
Result<int> PickFreePort(const std::string& host);

}  // namespace longhaul::stages

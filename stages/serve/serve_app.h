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

// The supervisor's configuration. The endpoint's host is --advertise-host, else the bind
// host, else (for 0.0.0.0 / ::) this machine's host name. Errors name the flag or the
// profile file and the variable.
Result<SupervisorConfig> PrepareServe(const ServeOptions& options, const std::string& exe_dir);

// A free TCP port on `host` (bound to port 0, then released).
Result<int> PickFreePort(const std::string& host);

}  // namespace longhaul::stages

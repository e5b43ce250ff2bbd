// What one invocation of the CLI works with: its streams, clock, terminal, environment and
// the way to reach a coordinator. main() fills it with the real ones; tests with their own.
#pragma once

#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "cli/coordinator.h"
#include "cli/credentials.h"
#include "core/clock.h"
#include "core/status.h"

namespace longhaul::cli {

struct CliEnv {
  std::istream* in = nullptr;  // `token hash` reads it
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  const Clock* clock = nullptr;
  std::function<void(int64_t ms)> sleep_ms;
  bool stdout_is_tty = false;
  std::function<int()> terminal_width;      // columns; 0 when unknown
  std::string cwd = ".";                    // where .longhaul/coordinator.addr is looked for
  // LONGHAUL_COORDINATOR, LONGHAUL_TOKEN, LONGHAUL_TOKEN_FILE, LONGHAUL_TLS_CA
  std::map<std::string, std::string> vars;
  // A client for the coordinator at `address` (HOST:PORT). Creating one does not connect.
  std::function<std::unique_ptr<Coordinator>(const std::string& address,
                                             const ClientCredentials& credentials)>
      connect;
};

// The coordinator's address: `flag` if set, else $LONGHAUL_COORDINATOR, else the first line
// of CWD/.longhaul/coordinator.addr (written by the quick start's daemon), else
// 127.0.0.1:7070.
std::string ResolveCoordinatorAddress(const std::string& flag, const CliEnv& env);

// One command's run: the env plus the global flags and, for commands that talk to the
// coordinator, the client.
struct CommandContext {
  CliEnv& env;
  std::string address;
  bool json = false;
  std::unique_ptr<Coordinator> coordinator;

  std::ostream& out() { return *env.out; }
  std::ostream& err() { return *env.err; }
  int64_t NowMs() const { return env.clock->NowMs(); }
  // Prints "longhaul: MESSAGE" on stderr once and returns the exit code for `status`;
  // UNAUTHENTICATED reads "longhaul: unauthenticated: MESSAGE" and PERMISSION_DENIED
  // "longhaul: permission denied: MESSAGE".
  int Fail(const Status& status);
};

}  // namespace longhaul::cli

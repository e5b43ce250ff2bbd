// longhaul: the command line. Wires the real streams, clock, terminal and gRPC client.
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cli/app.h"
#include "cli/grpc_coordinator.h"
#include "core/logging.h"

namespace {

int TerminalWidth() {
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* level = std::getenv("LONGHAUL_LOG_LEVEL");
  longhaul::SetupLogging(level ? level : "warn");

  longhaul::cli::CliEnv env;
  env.in = &std::cin;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.clock = longhaul::SystemClock::Get();
  env.sleep_ms = [](int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  env.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  env.terminal_width = TerminalWidth;
  for (const char* name :
       {"LONGHAUL_COORDINATOR", "LONGHAUL_TOKEN", "LONGHAUL_TOKEN_FILE", "LONGHAUL_TLS_CA"}) {
    if (const char* v = std::getenv(name)) env.vars[name] = v;
  }
  env.connect = [](const std::string& address, const longhaul::cli::ClientCredentials& creds) {
    longhaul::cli::GrpcCoordinatorOptions options;
    options.address = address;
    options.token = creds.token;
    options.tls_ca_pem = creds.tls_ca_pem;
    return std::make_unique<longhaul::cli::GrpcCoordinator>(options);
  };
  return longhaul::cli::RunCli(argc, argv, env);
}

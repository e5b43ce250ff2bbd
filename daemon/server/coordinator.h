// longhauld wired together: store, scheduler, its loop and the gRPC server. main() only parses
// flags and calls Run(); tests and benchmarks embed a Coordinator directly.
#pragma once

#include <memory>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "daemon/http/server.h"
#include "daemon/rpc/client_api.h"
#include "daemon/notify/outbox.h"
#include "daemon/scheduler/options.h"
#include "daemon/server/security.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::server {

// gRPC message limits of longhauld's listeners (docs/security.md, "Limits"). A request over
// kMaxGrpcReceiveBytes (a workflow submission is the largest) is refused RESOURCE_EXHAUSTED
// before it is parsed. Answers are bounded by paging (about 1 MiB of stages at most); one over
// kMaxGrpcSendBytes would be a bug and fails RESOURCE_EXHAUSTED rather than being sent.
inline constexpr int kMaxGrpcReceiveBytes = 64 << 20;
inline constexpr int kMaxGrpcSendBytes = 16 << 20;

// longhauld's own notification sinks and delivery (--notify-*; docs/operations.md).
struct NotifyOptions {
  workflow::NotifySpec spec;  // sinks for every run's events and agent_lost
  notify::RetryPolicy retry;
  int64_t timeout_ms = 30'000;  // one webhook request or command
  // PEM CA(s) that https webhooks' certificates must chain to; "" : the system's CA store.
  std::string ca_file;
  // The UI's address as notification readers reach it; "" : the HTTP listener's address.
  std::string ui_url;
  // Lets a workflow's notify.command and `longhaul notify test --command` run a command on
  // longhauld's host (--notify-allow-commands); its own --notify-command needs nothing.
  bool allow_commands = false;
};

struct CoordinatorOptions {
  std::string state_dir = ".longhaul";
  std::string db_path;    // default: STATE/longhaul.db
  std::string listen = "127.0.0.1:7070";  // port 0 picks a free port
  std::string addr_file;  // default: STATE/coordinator.addr; the address actually bound
  // Tokens, TLS and the agent listener (docs/security.md). Start() fills the *_pem fields.
  SecurityOptions security;
  std::string agent_addr_file;  // default: STATE/agent.addr (only with security.agent_listen)
  scheduler::SchedulerOptions scheduler;
  // The HTTP listener (JSON API, watch streams, UI). Empty listen: off. Its bound address is
  // written to http_addr_file (default STATE/http.addr).
  http::HttpOptions http;  // listen "" (the default here): off; longhauld's --http sets it
  std::string http_addr_file;
  // Retention (docs/operations.md): when either limit is set, a collection runs every
  // retention_interval_ms (and `longhaul gc` any time, with this policy by default).
  rpc::ClientApi::RetentionPolicy retention;
  int64_t retention_interval_ms = 3'600'000;
  NotifyOptions notify;
  // Who may use which priority class (--priority-allow; docs/scheduling.md).
  scheduler::PriorityPolicy priority;
  // The team of each user whose token names none (--teams; docs/scheduling.md).
  std::map<std::string, std::string> teams;
};

class Coordinator {
 public:
  explicit Coordinator(CoordinatorOptions options, Clock* clock = SystemClock::Get());
  ~Coordinator();

  // Checks the security set-up (CheckSecurity), loads tokens and certificates, opens the
  // store, recovers, starts serving gRPC (and HTTP when configured). Returns the bound gRPC
  // address ("127.0.0.1:PORT").
  Result<std::string> Start();
  // Reads the tokens file again (SIGHUP); on error keeps the tokens it had and says why.
  // FailedPrecondition when longhauld runs without --tokens.
  Status ReloadTokens();
  // The options as Start() completed them (the loaded PEM text included).
  const CoordinatorOptions& options() const;
  // Blocks until Shutdown() is called (from a signal handler thread, say).
  void Wait();
  // Stops serving and the loop; in-flight calls end with CANCELLED. Idempotent; a call made
  // while another is under way returns once that one is done.
  void Shutdown();
  // The bound HTTP address ("127.0.0.1:PORT"), or "" when HTTP is off.
  const std::string& http_address() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace longhaul::server

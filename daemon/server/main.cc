// longhauld: the coordinator daemon.
#include <csignal>
#include <random>
#include <cstdlib>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/server/coordinator.h"
#include "daemon/workflow/workflow.h"

namespace {

int64_t DurationFlag(const std::string& flag, const std::string& value) {
  auto ms = longhaul::ParseDurationMs(value);
  if (!ms.ok()) {
    std::fprintf(stderr, "longhauld: --%s: %s\n", flag.c_str(),
                 longhaul::ToStd(ms.status().message()).c_str());
    std::exit(2);
  }
  return *ms;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"longhauld: the longhaul coordinator. Schedules workflow runs onto agents and "
               "keeps their history in SQLite."};
  longhaul::server::CoordinatorOptions options;
  std::string agent_timeout = "15s", lost_after = "3m", heartbeat = "1s";
  std::string log_level = "info", log_file;
  app.add_option("--state-dir", options.state_dir, "where the database and address file live")
      ->capture_default_str();
  app.add_option("--db", options.db_path, "SQLite file (default: STATE/longhaul.db)");
  app.add_option("--listen", options.listen, "gRPC address; port 0 picks a free port")
      ->capture_default_str();
  app.add_option("--addr-file", options.addr_file,
                 "file to write the bound address to (default: STATE/coordinator.addr)");
  options.http.listen = "127.0.0.1:8080";
  app.add_option("--http", options.http.listen,
                 "HTTP address of the UI and JSON API ('' turns it off; port 0 picks a free "
                 "port); HTTPS with --tls-cert; off loopback it needs --tokens and --tls-cert, "
                 "or --insecure")
      ->capture_default_str();
  app.add_option("--http-host", options.http.hosts,
                 "another name (NAME or NAME:PORT) clients may use in Host for the HTTP "
                 "listener; repeatable. Loopback names and the --http host are always allowed; "
                 "other names get 421 (against DNS rebinding)");
  std::string http_header_timeout = "10s";
  app.add_option("--http-header-timeout", http_header_timeout,
                 "an HTTP connection whose request header (and TLS handshake) is not complete "
                 "this long after it opens, or after its first byte, is closed")
      ->capture_default_str();
  app.add_option("--http-max-connections", options.http.max_connections,
                 "open HTTP connections at most; past it a new one gets 503")
      ->capture_default_str();
  app.add_option("--http-addr-file", options.http_addr_file,
                 "file to write the bound HTTP address to (default: STATE/http.addr)");
  app.add_option("--ui-dir", options.http.ui_dir,
                 "serve the UI from this folder (web/dist) instead of the built-in copy");
  app.add_option("--http-max-streams", options.http.sse.max_streams,
                 "open watch streams (SSE) at most; past it a watch gets 503")
      ->capture_default_str();
  std::string sse_heartbeat = "15s";
  app.add_option("--sse-heartbeat", sse_heartbeat, "comment sent on idle watch streams this often")
      ->capture_default_str();
  app.add_option("--agent-timeout", agent_timeout,
                 "an agent silent this long is unreachable; its attempts are unknown")
      ->capture_default_str();
  app.add_option("--lost-after", lost_after,
                 "an agent silent this long is lost; its attempts are lost and retried")
      ->capture_default_str();
  app.add_option("--heartbeat", heartbeat, "heartbeat interval asked of agents")
      ->capture_default_str();
  auto& sec = options.security;
  app.add_option("--tokens", sec.tokens_file,
                 "file of 'ROLE NAME sha256:HEX' lines: the tokens clients must send (re-read "
                 "on SIGHUP); without it longhauld listens on loopback only");
  app.add_option("--tls-cert", sec.tls_cert_file,
                 "PEM certificate: serve the client API and the HTTP listener over TLS");
  app.add_option("--tls-key", sec.tls_key_file, "PEM private key of --tls-cert");
  app.add_option("--agent-listen", sec.agent_listen,
                 "a separate address for agents, with mutual TLS (needs --agent-ca, --tls-cert)");
  app.add_option("--agent-ca", sec.agent_ca_file,
                 "PEM CA whose certificates agents must present; the certificate names the agent");
  app.add_option("--agent-addr-file", options.agent_addr_file,
                 "file to write the bound agent address to (default: STATE/agent.addr)");
  app.add_flag("--insecure", sec.insecure,
               "listen off loopback without tokens, TLS or agent certificates (not for shared "
               "networks: see docs/security.md)");
  auto& notify = options.notify;
  app.add_option("--notify-webhook", notify.spec.webhooks,
                 "http:// URL sent a JSON POST for each event of --notify-on; repeatable");
  app.add_option("--notify-format", notify.spec.format,
                 "body of the --notify-webhook POSTs: json (the event) or slack ({\"text\"})")
      ->capture_default_str();
  std::string notify_command;
  app.add_option("--notify-command", notify_command,
                 "command run for each event of --notify-on, the event's JSON on stdin and "
                 "LONGHAUL_EVENT=KIND; split on spaces, no shell");
  std::string notify_on;
  app.add_option("--notify-on", notify_on,
                 "comma-separated events to notify (default every one): run_succeeded, "
                 "run_failed, run_cancelled, stage_failed, stage_stalled, service_lost, "
                 "agent_lost");
  app.add_option("--notify-tries", notify.retry.max_tries,
                 "tries of each notification before it is failed")
      ->capture_default_str();
  std::string notify_backoff = "5s", notify_max_backoff = "5m", notify_timeout = "30s";
  app.add_option("--notify-backoff", notify_backoff,
                 "wait after a notification's first failed try; doubles after each")
      ->capture_default_str();
  app.add_option("--notify-max-backoff", notify_max_backoff,
                 "the longest wait between two tries of a notification")
      ->capture_default_str();
  app.add_option("--notify-timeout", notify_timeout,
                 "one webhook request or command at most this long")
      ->capture_default_str();
  app.add_flag("--notify-allow-commands", notify.allow_commands,
               "let workflows (notify.command) and `longhaul notify test --command` run a "
               "command on this host as longhauld's user; without it they are refused");
  app.add_option("--notify-ui-url", notify.ui_url,
                 "the UI's URL as readers of notifications reach it, for the run's link "
                 "(default: the --http listener's)");
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  app.add_option("--log-file", log_file, "also log to this file");
  CLI11_PARSE(app, argc, argv);

  options.scheduler.agent_timeout_ms = DurationFlag("agent-timeout", agent_timeout);
  options.scheduler.lost_after_ms = DurationFlag("lost-after", lost_after);
  options.scheduler.heartbeat_interval_ms = DurationFlag("heartbeat", heartbeat);
  options.scheduler.seed = std::random_device{}();
  options.http.sse.heartbeat_ms = DurationFlag("sse-heartbeat", sse_heartbeat);
  options.http.header_timeout_ms = DurationFlag("http-header-timeout", http_header_timeout);
  notify.retry.backoff_ms = DurationFlag("notify-backoff", notify_backoff);
  notify.retry.max_backoff_ms = DurationFlag("notify-max-backoff", notify_max_backoff);
  notify.timeout_ms = DurationFlag("notify-timeout", notify_timeout);
  for (const std::string& word : longhaul::StrSplit(notify_command, ' ')) {
    if (!word.empty()) notify.spec.command.push_back(word);
  }
  for (const std::string& kind : longhaul::StrSplit(notify_on, ',')) {
    std::string_view k = longhaul::StripWhitespace(kind);
    if (!k.empty()) notify.spec.on.emplace_back(k);
  }
  if (auto st = longhaul::workflow::CheckNotifySpec(notify.spec, "--notify-*"); !st.ok()) {
    std::fprintf(stderr, "longhauld: %s\n", longhaul::ToStd(st.message()).c_str());
    return 2;
  }
  if (notify.retry.max_tries < 1) {
    std::fprintf(stderr, "longhauld: --notify-tries: expected 1 or more, got %d\n",
                 notify.retry.max_tries);
    return 2;
  }
  // Signals are taken by a thread of their own, so shutdown never runs in a handler. They are
  // blocked before any thread starts (logging's flusher included), so that every thread
  // inherits the mask and none dies of a SIGHUP.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  longhaul::SetupLogging(log_level, log_file);

  longhaul::server::Coordinator coordinator(options);
  auto addr = coordinator.Start();
  if (!addr.ok()) {
    longhaul::GetLogger("longhauld")->error("cannot start: {}",
                                            longhaul::ToStd(addr.status().message()));
    return 1;
  }
  std::thread signals([&] {
    auto log = longhaul::GetLogger("longhauld");
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      if (sig != SIGHUP) {
        log->info("signal {}: shutting down", sig);
        coordinator.Shutdown();
        return;
      }
      longhaul::Status s = coordinator.ReloadTokens();
      if (s.ok()) {
        log->info("SIGHUP: tokens reloaded from {}", options.security.tokens_file);
      } else {
        log->error("SIGHUP: tokens not reloaded, the previous ones stay in force: {}",
                   longhaul::ToStd(s.message()));
      }
    }
  });
  coordinator.Wait();
  coordinator.Shutdown();
  signals.detach();
  return 0;
}

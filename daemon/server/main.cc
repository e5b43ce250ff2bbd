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
#include "daemon/store/backup.h"

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
  std::string backup;
  app.add_option("--backup", backup,
                 "copy the database (--db, or STATE/longhaul.db) to this new file, check the "
                 "copy with integrity_check and exit; safe while a longhauld uses the database");
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  app.add_option("--log-file", log_file, "also log to this file");
  CLI11_PARSE(app, argc, argv);

  if (!backup.empty()) {
    std::string db =
        options.db_path.empty() ? options.state_dir + "/longhaul.db" : options.db_path;
    auto done = longhaul::store::BackupDatabase(db, backup);
    if (!done.ok()) {
      std::fprintf(stderr, "longhauld: %s\n", longhaul::ToStd(done.status().message()).c_str());
      return 1;
    }
    std::printf("backed up %s to %s: %lld pages, %lld bytes, schema version %d, integrity_check "
                "ok; copy %lld ms, check %lld ms, total %lld ms\n",
                db.c_str(), done->path.c_str(), static_cast<long long>(done->pages),
                static_cast<long long>(done->bytes), done->schema_version,
                static_cast<long long>(done->copy_ms), static_cast<long long>(done->check_ms),
                static_cast<long long>(done->total_ms));
    return 0;
  }
  options.scheduler.agent_timeout_ms = DurationFlag("agent-timeout", agent_timeout);
  options.scheduler.lost_after_ms = DurationFlag("lost-after", lost_after);
  options.scheduler.heartbeat_interval_ms = DurationFlag("heartbeat", heartbeat);
  options.scheduler.seed = std::random_device{}();
  options.http.sse.heartbeat_ms = DurationFlag("sse-heartbeat", sse_heartbeat);
  options.http.header_timeout_ms = DurationFlag("http-header-timeout", http_header_timeout);
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

#include "daemon/server/coordinator.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/fs.h"
#include "core/logging.h"
#include "core/memory_policy.h"
#include "core/strings.h"
#include "daemon/auth/address.h"
#include "daemon/auth/authorizer.h"
#include "daemon/auth/token_store.h"
#include "daemon/http/server.h"
#include "daemon/http/token_authorizer.h"
#include "daemon/notify/notifier.h"
#include "daemon/notify/sink.h"
#include "daemon/rpc/agent_service.h"
#include "daemon/rpc/client_api.h"
#include "daemon/rpc/client_service.h"
#include "daemon/scheduler/loop.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::server {
namespace {

void ConfigureBuilder(grpc::ServerBuilder& builder) {
  builder.SetMaxReceiveMessageSize(kMaxGrpcReceiveBytes);
  builder.SetMaxSendMessageSize(kMaxGrpcSendBytes);
  // Agents keep their stream open for days: notice a dead peer through keepalive pings.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 20'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5'000);
}

// "HOST:PORT" as clients should dial it: a wildcard host becomes 127.0.0.1.
std::string BoundAddress(const std::string& listen, int port) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
  return StrCat(host, ":", port);
}

// One line at start: which cluster this store is, and whether it was just created or is a
// backup copy put back (docs/coordinator.md, "Identity").
void LogStoreIdentity(const store::SqliteStore& store, bool new_cluster) {
  auto log = GetLogger("longhauld");
  const store::StoreIdentity& id = store.identity();
  if (id.created) {
    log->warn(
        "created a new, empty store {} (cluster {}): agents that served another cluster "
        "are {}",
        store.path(), id.cluster_id,
        new_cluster ? "taken over (--new-cluster)"
                    : "refused; if a store was lost, restore its backup instead, or "
                      "start with --new-cluster to take them over");
  } else if (!id.restored_from.empty()) {
    log->warn(
        "{} is a backup copy (cluster {}, taken at {} ms since the epoch, incarnation {}): "
        "this is incarnation {}; attempt ids start above those the agents report",
        store.path(), id.cluster_id, id.copied_at_ms, id.restored_from, id.incarnation);
  } else {
    log->info("store {}: cluster {}, incarnation {}", store.path(), id.cluster_id, id.incarnation);
  }
}

}  // namespace

struct Coordinator::Impl {
  CoordinatorOptions options;
  Clock* clock;
  // What is done with freed memory; outlives everything that tells it (declared first).
  std::unique_ptr<MemoryPolicy> memory;
  std::unique_ptr<auth::TokenStore> tokens;
  std::unique_ptr<auth::ActionAuthorizer> authorizer;
  std::unique_ptr<store::SqliteStore> store;
  metrics::CoordinatorMetrics metrics;
  rpc::AgentServiceImpl agent_service;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  std::unique_ptr<scheduler::SchedulerLoop> loop;
  std::unique_ptr<notify::HttpCommandDeliverer> deliverer;
  std::unique_ptr<notify::Notifier> notifier;
  std::unique_ptr<rpc::ClientApi> client_api;
  std::unique_ptr<rpc::ClientServiceImpl> client_service;
  std::unique_ptr<http::TokenHttpAuthorizer> http_authorizer;
  std::unique_ptr<http::HttpServer> http;
  std::string http_address;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<grpc::Server> agent_server;  // only with --agent-listen
  std::mutex mu;
  bool shut_down = false;
  std::condition_variable stop_gc;
  std::thread gc;  // retention by policy, every options.retention_interval_ms
  std::once_flag shutdown_once;

  void RetentionLoop();
  void ShutdownOnce();

  Result<std::string> StartAgentListener();
};

Coordinator::Coordinator(CoordinatorOptions options, Clock* clock)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->clock = clock;
}

Coordinator::~Coordinator() {
  Shutdown();
  if (impl_->memory) UninstallMemoryPolicy(impl_->memory.get());
}

const CoordinatorOptions& Coordinator::options() const { return impl_->options; }

Status Coordinator::ReloadTokens() {
  if (!impl_->tokens) return absl::FailedPreconditionError("longhauld runs without --tokens");
  return impl_->tokens->Reload();
}

Result<std::string> Coordinator::Start() {
  Impl& m = *impl_;
  auto log = GetLogger("longhauld");
  SecurityOptions& sec = m.options.security;
  ASSIGN_OR_RETURN(std::vector<std::string> notes, CheckSecurity(m.options.listen, sec));
  ASSIGN_OR_RETURN(std::vector<std::string> http_notes,
                   CheckHttpSecurity(m.options.http.listen, sec));
  notes.insert(notes.end(), http_notes.begin(), http_notes.end());
  RETURN_IF_ERROR(LoadTlsFiles(&sec));
  // The HTTP listener serves TLS with the client API's certificate.
  m.options.http.tls_cert_pem = sec.tls_cert_pem;
  m.options.http.tls_key_pem = sec.tls_key_pem;
  if (!sec.tokens_file.empty()) {
    ASSIGN_OR_RETURN(m.tokens, auth::TokenStore::Load(sec.tokens_file));
    m.authorizer = std::make_unique<auth::TokenAuthorizer>(m.tokens.get());
    log->info("{} tokens from {}", m.tokens->size(), sec.tokens_file);
  } else {
    m.authorizer = std::make_unique<auth::OpenAuthorizer>();
  }
  for (const std::string& note : notes) {
    if (sec.insecure && note.rfind("--insecure", 0) == 0) {
      log->warn("{}", note);
    } else {
      log->info("{}", note);
    }
  }

  RETURN_IF_ERROR(MakeDirs(m.options.state_dir));
  std::string db =
      m.options.db_path.empty() ? m.options.state_dir + "/longhaul.db" : m.options.db_path;
  ASSIGN_OR_RETURN(m.store, store::SqliteStore::Open(db));
  LogStoreIdentity(*m.store, m.options.scheduler.new_cluster);
  m.memory = std::make_unique<MemoryPolicy>(m.clock);
  InstallMemoryPolicy(m.memory.get());  // the workflow parser's and the planner's big buffers
  m.store->set_memory_policy(m.memory.get());
  m.scheduler = std::make_unique<scheduler::Scheduler>(m.store.get(), m.clock, &m.agent_service,
                                                       m.options.scheduler);
  m.scheduler->set_metrics(&m.metrics);
  m.loop = std::make_unique<scheduler::SchedulerLoop>(m.scheduler.get(), m.store.get(), m.clock);
  // Pending notifications of an earlier longhauld are tried again at once (read before the
  // loop's thread owns the writer connection).
  ASSIGN_OR_RETURN(std::vector<store::NotificationRow> pending,
                   m.store->LoadPendingNotifications());
  for (auto& row : pending) row.next_try_at_ms = m.clock->NowMs();
  m.deliverer = std::make_unique<notify::HttpCommandDeliverer>(m.options.notify.timeout_ms,
                                                               m.options.notify.ca_file);
  m.notifier = std::make_unique<notify::Notifier>(
      m.deliverer.get(), m.clock, m.options.notify.retry,
      [&m](const store::NotificationRow& row) {
        // The try's result is written by the loop, in its next batch: one writer.
        m.loop->Post([&m, row] {
          Status st = m.store->UpdateNotification(row);
          if (!st.ok()) {
            GetLogger("notify")->error("notification {}: cannot record its delivery: {}", row.id,
                                       ToStd(st.message()));
          }
        });
      },
      &m.metrics);
  m.scheduler->set_notifications(m.notifier.get(), m.options.notify.spec);
  m.loop->set_metrics(&m.metrics);
  m.loop->set_memory_policy(m.memory.get());
  m.agent_service.Attach(m.scheduler.get(), m.loop.get());
  m.agent_service.set_require_certificate(!sec.agent_listen.empty());
  // A session silent as long as makes an agent unreachable no longer holds its id.
  m.agent_service.set_replace_silent_after_ms(m.options.scheduler.agent_timeout_ms);
  m.agent_service.set_cluster(m.store->identity().cluster_id, db, m.options.scheduler.new_cluster);
  m.client_api = std::make_unique<rpc::ClientApi>(m.scheduler.get(), m.loop.get(), m.store.get(),
                                                  m.options.scheduler.log_timeout_ms, m.clock);
  m.client_api->set_metrics(&m.metrics);
  m.client_api->set_memory_policy(m.memory.get());
  m.client_api->set_retention(m.options.retention);
  m.client_api->set_priority_policy(m.options.priority);
  m.client_api->set_teams(m.options.teams);
  rpc::ClientNotifyConfig notify_config;
  notify_config.deliverer = m.deliverer.get();
  notify_config.daemon_spec = m.options.notify.spec;
  notify_config.ui_base = m.options.notify.ui_url;  // the HTTP listener's is not known yet
  notify_config.allow_commands = m.options.notify.allow_commands;
  m.client_api->set_notify(std::move(notify_config));
  m.client_service =
      std::make_unique<rpc::ClientServiceImpl>(m.client_api.get(), m.authorizer.get());
  RETURN_IF_ERROR(m.loop->Start());
  if (!pending.empty()) {
    log->info("{} notification(s) pending from before: sending them now", pending.size());
  }
  m.notifier->Enqueue(std::move(pending));
  m.notifier->Start();

  grpc::ServerBuilder builder;
  int port = 0;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!sec.tls_cert_pem.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({sec.tls_key_pem, sec.tls_cert_pem});
    creds = grpc::SslServerCredentials(ssl);
  }
  builder.AddListeningPort(m.options.listen, creds, &port);
  // With an agent listener, agents may come only through it: never on the client port.
  if (sec.agent_listen.empty()) builder.RegisterService(&m.agent_service);
  builder.RegisterService(m.client_service.get());
  ConfigureBuilder(builder);
  m.server = builder.BuildAndStart();
  if (m.server == nullptr || port == 0) {
    m.loop->Stop();
    return absl::UnavailableError(StrCat("cannot listen on ", m.options.listen,
                                         " (address in use, not available, or a bad "
                                         "certificate/key: see the lines above)"));
  }
  std::string addr = BoundAddress(m.options.listen, port);
  if (!sec.agent_listen.empty()) {
    Result<std::string> agent_addr = m.StartAgentListener();
    if (!agent_addr.ok()) {
      m.server->Shutdown();
      m.loop->Stop();
      return agent_addr.status();
    }
  }
  std::string addr_file =
      m.options.addr_file.empty() ? m.options.state_dir + "/coordinator.addr" : m.options.addr_file;
  if (!m.options.http.listen.empty()) {
    m.http_authorizer = std::make_unique<http::TokenHttpAuthorizer>(m.authorizer.get());
    m.http = std::make_unique<http::HttpServer>(m.client_api.get(), m.options.http,
                                                m.http_authorizer.get());
    Result<std::string> http_addr = m.http->Start();
    if (!http_addr.ok()) {
      m.server->Shutdown();
      m.loop->Stop();
      return http_addr.status();
    }
    m.http_address = *http_addr;
    if (m.options.notify.ui_url.empty()) {
      m.options.notify.ui_url =
          StrCat(sec.tls_cert_pem.empty() ? "http://" : "https://", m.http_address);
    }
    std::string http_file = m.options.http_addr_file.empty() ? m.options.state_dir + "/http.addr"
                                                             : m.options.http_addr_file;
    RETURN_IF_ERROR(WriteFileAtomic(http_file, m.http_address + "\n"));
    log->info("longhauld UI and HTTP API on {}://{}/", sec.tls_cert_pem.empty() ? "http" : "https",
              m.http_address);
  }
  if (!m.options.notify.ui_url.empty()) {
    m.loop->Post([&m] { m.scheduler->set_ui_base(m.options.notify.ui_url); });
  }
  RETURN_IF_ERROR(WriteFileAtomic(addr_file, addr + "\n"));
  log->info("longhauld listening on {}{} (database {})", addr,
            sec.tls_cert_pem.empty() ? "" : " with TLS", db);
  // Always: a workflow's own `retention:` block applies without a policy of the daemon's.
  m.gc = std::thread([&m] { m.RetentionLoop(); });
  return addr;
}

Result<std::string> Coordinator::Impl::StartAgentListener() {
  const SecurityOptions& sec = options.security;
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = sec.agent_ca_pem;
  ssl.pem_key_cert_pairs.push_back({sec.tls_key_pem, sec.tls_cert_pem});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(sec.agent_listen, grpc::SslServerCredentials(ssl), &port);
  builder.RegisterService(&agent_service);
  ConfigureBuilder(builder);
  agent_server = builder.BuildAndStart();
  if (agent_server == nullptr || port == 0) {
    return absl::UnavailableError(StrCat("cannot listen for agents on ", sec.agent_listen,
                                         " (address in use, not available, or a bad "
                                         "certificate, key or CA)"));
  }
  std::string addr = BoundAddress(sec.agent_listen, port);
  std::string file =
      options.agent_addr_file.empty() ? options.state_dir + "/agent.addr" : options.agent_addr_file;
  RETURN_IF_ERROR(WriteFileAtomic(file, addr + "\n"));
  GetLogger("longhauld")
      ->info(
          "agents connect on {} with mutual TLS (client certificates from {}); an agent's id is "
          "the one its certificate names",
          addr, sec.agent_ca_file);
  return addr;
}

void Coordinator::Wait() {
  if (impl_->server) impl_->server->Wait();
}

void Coordinator::Shutdown() {
  // Once. A second caller waits until the first one is done: main() calls it when Wait()
  // returns, which is while the signal thread's call is still stopping the rest, and then
  // destroys the coordinator (with the retention thread still joinable: std::terminate).
  std::call_once(impl_->shutdown_once, [this] { impl_->ShutdownOnce(); });
}

void Coordinator::Impl::ShutdownOnce() {
  Impl& m = *this;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.shut_down = true;
  }
  if (m.http) m.http->Stop();
  m.agent_service.CloseAll();
  auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(2);
  if (m.agent_server) m.agent_server->Shutdown(deadline);
  if (m.server) m.server->Shutdown(deadline);
  // The notifier first: the result of its last try goes to the loop before the loop stops.
  if (m.notifier) m.notifier->Stop();
  m.stop_gc.notify_all();  // a collection waiting on an agent was answered by CloseAll()
  if (m.gc.joinable()) m.gc.join();
  if (m.loop) m.loop->Stop();
}

void Coordinator::Impl::RetentionLoop() {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    stop_gc.wait_for(lock, std::chrono::milliseconds(options.retention_interval_ms),
                     [this] { return shut_down; });
    if (shut_down) return;
    lock.unlock();
    Result<v1::GcResponse> r = client_api->CollectGarbage(v1::GcRequest());
    if (!r.ok()) {
      GetLogger("gc")->warn("retention failed: {}", ToStd(r.status().message()));
    } else {
      for (const auto& run : r->runs()) {
        if (!run.error().empty()) GetLogger("gc")->warn("run {}: {}", run.run_id(), run.error());
      }
    }
    lock.lock();
  }
}

const std::string& Coordinator::http_address() const { return impl_->http_address; }

}  // namespace longhaul::server

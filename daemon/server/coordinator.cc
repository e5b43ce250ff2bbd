#include "daemon/server/coordinator.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <mutex>

#include "core/fs.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/rpc/agent_service.h"
#include "daemon/http/server.h"
#include "daemon/rpc/client_api.h"
#include "daemon/rpc/client_service.h"
#include "daemon/scheduler/loop.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::server {

struct Coordinator::Impl {
  CoordinatorOptions options;
  Clock* clock;
  std::unique_ptr<store::SqliteStore> store;
  rpc::AgentServiceImpl agent_service;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  std::unique_ptr<scheduler::SchedulerLoop> loop;
  std::unique_ptr<rpc::ClientApi> client_api;
  std::unique_ptr<rpc::ClientServiceImpl> client_service;
  std::unique_ptr<http::HttpServer> http;
  std::string http_address;
  std::unique_ptr<grpc::Server> server;
  std::mutex mu;
  bool shut_down = false;
};

Coordinator::Coordinator(CoordinatorOptions options, Clock* clock)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->clock = clock;
}

Coordinator::~Coordinator() { Shutdown(); }

Result<std::string> Coordinator::Start() {
  Impl& m = *impl_;
  auto log = GetLogger("longhauld");
  RETURN_IF_ERROR(MakeDirs(m.options.state_dir));
  std::string db = m.options.db_path.empty() ? m.options.state_dir + "/longhaul.db"
                                             : m.options.db_path;
  ASSIGN_OR_RETURN(m.store, store::SqliteStore::Open(db));
  m.scheduler = std::make_unique<scheduler::Scheduler>(m.store.get(), m.clock, &m.agent_service,
                                                       m.options.scheduler);
  m.loop = std::make_unique<scheduler::SchedulerLoop>(m.scheduler.get(), m.store.get(), m.clock);
  m.agent_service.Attach(m.scheduler.get(), m.loop.get());
  m.client_api = std::make_unique<rpc::ClientApi>(
      m.scheduler.get(), m.loop.get(), m.store.get(), m.options.scheduler.log_timeout_ms);
  m.client_service = std::make_unique<rpc::ClientServiceImpl>(m.client_api.get());
  RETURN_IF_ERROR(m.loop->Start());

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(m.options.listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&m.agent_service);
  builder.RegisterService(m.client_service.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  // Agents keep their stream open for days: notice a dead peer through keepalive pings.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 20'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5'000);
  m.server = builder.BuildAndStart();
  if (m.server == nullptr || port == 0) {
    m.loop->Stop();
    return absl::UnavailableError(StrCat("cannot listen on ", m.options.listen,
                                         " (address in use or not available)"));
  }
  std::string host = m.options.listen.substr(0, m.options.listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
  std::string addr = StrCat(host, ":", port);
  std::string addr_file = m.options.addr_file.empty()
                              ? m.options.state_dir + "/coordinator.addr"
                              : m.options.addr_file;
  if (!m.options.http.listen.empty()) {
    m.http = std::make_unique<http::HttpServer>(m.client_api.get(), m.options.http);
    Result<std::string> http_addr = m.http->Start();
    if (!http_addr.ok()) {
      m.server->Shutdown();
      m.loop->Stop();
      return http_addr.status();
    }
    m.http_address = *http_addr;
    std::string http_file = m.options.http_addr_file.empty()
                                ? m.options.state_dir + "/http.addr"
                                : m.options.http_addr_file;
    RETURN_IF_ERROR(WriteFileAtomic(http_file, m.http_address + "\n"));
    log->info("longhauld UI and HTTP API on http://{}/", m.http_address);
  }
  RETURN_IF_ERROR(WriteFileAtomic(addr_file, addr + "\n"));
  log->info("longhauld listening on {} (database {})", addr, db);
  return addr;
}

void Coordinator::Wait() {
  if (impl_->server) impl_->server->Wait();
}

void Coordinator::Shutdown() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.shut_down) return;
    m.shut_down = true;
  }
  if (m.http) m.http->Stop();
  m.agent_service.CloseAll();
  if (m.server) m.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (m.loop) m.loop->Stop();
}

const std::string& Coordinator::http_address() const { return impl_->http_address; }

}  // namespace longhaul::server

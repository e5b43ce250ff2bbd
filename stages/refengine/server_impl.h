// Private to the refengine server: the state shared by server.cc (lifecycle, routes) and
// generation.cc (the two generation endpoints).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <ostream>
#include <thread>

#include "core/net/http_server.h"
#include "stages/refengine/asio.h"
#include "stages/refengine/engine_loop.h"
#include "stages/refengine/metrics.h"
#include "stages/refengine/openai_api.h"
#include "stages/refengine/server.h"
#include "stages/refmodel/drafter.h"
#include "stages/refmodel/target_model.h"

namespace longhaul::refengine {

class RefEngineServer::Impl {
 public:
  Impl(ServerOptions options, std::ostream& out);
  ~Impl();

  Status Start();
  Status Run();
  void Stop();

  // Routes (server.cc).
  void Handle(net::ServerRequest req, std::shared_ptr<net::HttpResponder> resp);
  void Health(net::HttpResponder& resp);
  void HealthGenerate(std::shared_ptr<net::HttpResponder> resp);
  void Models(net::HttpResponder& resp);
  void Metrics(net::HttpResponder& resp);
  MetricsView View() const;
  // Generation (generation.cc).
  void Generate(const net::ServerRequest& req, std::shared_ptr<net::HttpResponder> resp, bool chat);
  uint64_t NextRequestSeed();

  void StartLoading();
  void OnLoaded(Status status, std::shared_ptr<refmodel::TargetModel> target,
                std::shared_ptr<refmodel::Drafter> drafter, double seconds);

  ServerOptions options_;
  std::ostream& out_;
  boost::asio::io_context io_;
  net::HttpServer http_;
  int port_ = 0;
  std::thread loader_;
  std::atomic<bool> stopping_{false};
  Status load_status_;
  bool loaded_ = false;
  std::shared_ptr<refmodel::TargetModel> target_;
  std::shared_ptr<refmodel::Drafter> drafter_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<EngineLoop> loop_;
  ServerMetrics metrics_;
  uint64_t next_id_ = 1;
  int64_t generation_requests_ = 0;
  std::function<void()> crash_;
  boost::asio::steady_timer delay_timer_;
  boost::asio::signal_set signals_;
  std::chrono::steady_clock::time_point started_at_;
};

}  // namespace longhaul::refengine

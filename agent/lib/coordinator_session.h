// CoordinatorLink over gRPC: one AgentService.Connect stream at a time, re-dialed with
// backoff (100 ms doubling to 5 s, jittered; reset once a Welcome arrives). A refusal
// (FAILED_PRECONDITION: an agent protocol version the coordinator cannot speak) is logged as
// an error each time and retried every 5 s. ABORTED (a coordinator of another cluster) ends
// the session: on_refused, and no more dials. A refusal of this agent's id (ALREADY_EXISTS: a
// live session of the same id is connected) is retried for as long as the coordinator says
// it takes to replace a silent session (proto/agent_refusal.h), plus a few dials: a restarted
// agent whose old connection is half-open gets in then. Refused past that, the other agent is
// alive: on_refused, and no more dials.
//
// Threads: a connection thread dials and reads (Read blocks), a writer thread per stream
// drains a queue (Write blocks under flow control), so a stalled coordinator never blocks the
// caller of Send. The callbacks run on those threads; the agent posts them into its loop.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/lib/coordinator_link.h"
#include "longhaul/v1/agent.grpc.pb.h"

namespace longhaul::agent {

struct SessionOptions {
  std::string target;  // HOST:PORT
  int64_t initial_backoff_ms = 100;
  int64_t max_backoff_ms = 5000;
  int64_t keepalive_ms = 30'000;  // HTTP/2 pings; 0 disables
  int64_t keepalive_timeout_ms = 10'000;
  // Mutual TLS (the coordinator's --agent-listen): all three PEM texts, or none for plaintext.
  std::string tls_ca_pem;    // verifies the coordinator's certificate
  std::string tls_cert_pem;  // this agent's certificate: its CN or a SAN is the agent's id
  std::string tls_key_pem;
};

class CoordinatorSession : public CoordinatorLink {
 public:
  struct Callbacks {
    std::function<void(uint64_t gen)> on_open;
    std::function<void(uint64_t gen, v1::CoordinatorMessage msg)> on_message;
    std::function<void(uint64_t gen, std::string why)> on_close;
    // The coordinator refused this agent for good (ABORTED: it is another cluster's,
    // docs/agent.md, "The cluster it serves"; or ALREADY_EXISTS past its retry window: another
    // live agent holds this id, docs/agent.md, "One agent per id"): called once, after
    // on_close, and the session stops dialing.
    std::function<void(std::string why)> on_refused;
  };

  CoordinatorSession(SessionOptions opts, Callbacks cb);
  ~CoordinatorSession() override;  // Stop()s

  void Start();
  // Cancels the stream and joins the threads. Idempotent.
  void Stop();

  void Send(uint64_t generation, v1::AgentMessage msg) override;

 private:
  void Run();
  void WriteLoop(uint64_t gen,
                 grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>* stream,
                 grpc::ClientContext* ctx);
  int64_t Jittered(int64_t ms);

  const SessionOptions opts_;
  const Callbacks cb_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentService::Stub> stub_;
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                      // guarded by mu_
  uint64_t active_gen_ = 0;                    // guarded by mu_; 0 while no stream is open
  grpc::ClientContext* active_ctx_ = nullptr;  // guarded by mu_
  std::deque<v1::AgentMessage> queue_;         // guarded by mu_; for active_gen_
  bool writer_done_ = false;                   // guarded by mu_; the stream's writer returned
};

}  // namespace longhaul::agent

// A real gRPC AgentService on 127.0.0.1 for the agent's integration tests. It records what
// the agent sends, stores events insert-or-ignore by (attempt, seq) as the real coordinator
// does, acknowledges events and exits unless told not to, and lets a test send anything.
// Thread-safe.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "longhaul/v1/agent.grpc.pb.h"

namespace longhaul::testing {

class FakeCoordinator : public v1::AgentService::Service {
 public:
  // Listens on 127.0.0.1:`port` (0: any free port).
  explicit FakeCoordinator(int port = 0);
  ~FakeCoordinator() override;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Cancels the stream and stops listening, as a coordinator that went away.
  void Shutdown();

  void set_auto_ack(bool on);
  // While set, every stream ends with this status right after its Hello (which last_hello()
  // then shows), as a coordinator that refuses the agent does. nullopt: accept again.
  void set_refusal(std::optional<grpc::Status> refusal);
  int refused_count() const;
  // While stalled the coordinator reads nothing: the agent's writes back up, as with a
  // coordinator that hangs or a network that drops packets.
  void set_stalled(bool on);
  // Sends on the current stream; false when no agent is connected.
  bool Send(const v1::CoordinatorMessage& msg);
  bool Start(const v1::StartAttempt& start);
  bool Cancel(int64_t attempt_id, const std::string& reason, int64_t grace_ms);
  bool AckEvents(int64_t attempt_id, int64_t up_to_seq);

  bool connected() const;
  int hello_count() const;
  std::optional<v1::Hello> last_hello() const;
  std::map<int64_t, std::string> events(int64_t attempt_id) const;  // seq -> line, stored once
  int64_t events_received(int64_t attempt_id) const;                // including re-sends
  std::vector<int64_t> event_stamps(int64_t attempt_id) const;  // ts_ms of each stored event
  int64_t max_seq_received(int64_t attempt_id) const;
  std::vector<v1::AttemptStarted> started(int64_t attempt_id) const;
  std::optional<v1::AttemptExited> exited(int64_t attempt_id) const;
  int exits_received(int64_t attempt_id) const;
  std::optional<v1::LogData> log(int64_t request_id) const;
  std::optional<v1::ArtifactCheck> artifacts(int64_t request_id) const;
  int heartbeats() const;
  // An event line whose seq arrived after the exit of its attempt, on the same stream.
  bool saw_event_after_exit() const;
  // When the first AttemptStarted / AttemptExited of an attempt arrived (steady clock).
  std::optional<std::chrono::steady_clock::time_point> started_time(int64_t attempt_id) const;
  std::optional<std::chrono::steady_clock::time_point> exited_time(int64_t attempt_id) const;

  grpc::Status Connect(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream) override;

 private:
  void Record(const v1::AgentMessage& msg,
              grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream);

  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;

  mutable std::mutex mu_;
  std::mutex write_mu_;  // one writer at a time on the stream
  grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream_ = nullptr;
  grpc::ServerContext* ctx_ = nullptr;
  bool auto_ack_ = true;
  bool stalled_ = false;
  std::condition_variable unstalled_;
  std::condition_variable stream_gone_;
  std::map<int64_t, std::chrono::steady_clock::time_point> started_time_, exited_time_;
  int hellos_ = 0;
  std::optional<grpc::Status> refusal_;
  int refused_ = 0;
  std::optional<v1::Hello> hello_;
  std::map<int64_t, std::map<int64_t, std::string>> events_;
  std::map<int64_t, int64_t> received_;
  std::map<int64_t, std::vector<int64_t>> stamps_;
  std::map<int64_t, std::vector<v1::AttemptStarted>> started_;
  std::map<int64_t, v1::AttemptExited> exited_;
  std::map<int64_t, int> exit_count_;
  std::map<int64_t, v1::LogData> logs_;
  std::map<int64_t, v1::ArtifactCheck> artifacts_;
  std::map<int64_t, bool> exit_seen_on_stream_;
  bool event_after_exit_ = false;
  int heartbeats_ = 0;
};

}  // namespace longhaul::testing

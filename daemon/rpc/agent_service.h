// AgentService: one bidirectional stream per agent. Each stream is a session with its own
// writer thread, so the scheduler loop only ever queues messages and never blocks on a slow or
// stalled agent. Implements scheduler::AgentLink.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "daemon/scheduler/agent_link.h"
#include "daemon/scheduler/loop.h"
#include "daemon/scheduler/scheduler.h"
#include "longhaul/v1/agent.grpc.pb.h"

namespace longhaul::rpc {

class AgentSession;

class AgentServiceImpl final : public v1::AgentService::Service, public scheduler::AgentLink {
 public:
  AgentServiceImpl() = default;
  ~AgentServiceImpl() override;
  // Must be called before the server starts.
  void Attach(scheduler::Scheduler* scheduler, scheduler::SchedulerLoop* loop) {
    scheduler_ = scheduler;
    loop_ = loop;
  }
  // With `require` (the mutual-TLS agent listener), an agent is accepted only under an id its
  // verified client certificate names (CN or a subject alternative name); a hello claiming
  // another id is refused with PERMISSION_DENIED and a log line that says why. Must be called
  // before the server starts.
  void set_require_certificate(bool require) { require_certificate_ = require; }
  // One agent per id. While a session of agent id X is live, a second connection claiming X
  // is refused with ALREADY_EXISTS ("agent id 'X' is already connected from HOST:PORT (since
  // ...)"), logged once per live session, and the live session is left alone. A session is
  // live unless its stream has ended or nothing has been read on it for `ms` (the agent's
  // heartbeats stop when its process dies, while a half-open stream may linger): a silent one
  // is closed and the new connection takes its place, so a restarted agent is let in within
  // `ms`. The refusal carries `ms` in its trailing metadata (kReplaceAfterMetadata) so the
  // refused agent knows how long to keep trying. Must be called before the server starts.
  void set_replace_silent_after_ms(int64_t ms) { replace_silent_after_ms_ = ms; }
  // The store's cluster id (docs/coordinator.md, "Identity"): a hello naming another cluster
  // is refused with ABORTED (the agent stops) and a message naming both ids and `db_path`,
  // unless `take_over` (--new-cluster). Must be called before the server starts.
  void set_cluster(std::string cluster_id, std::string db_path, bool take_over) {
    cluster_id_ = std::move(cluster_id);
    db_path_ = std::move(db_path);
    take_over_ = take_over;
  }

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream) override;

  // AgentLink
  void Send(uint64_t session_id, const v1::CoordinatorMessage& msg) override;
  void Close(uint64_t session_id) override;

  // Ends every session (shutdown).
  void CloseAll();

 private:
  scheduler::Scheduler* scheduler_ = nullptr;
  scheduler::SchedulerLoop* loop_ = nullptr;
  // Refuses `hello` if another live session holds its agent id; else closes a silent one that
  // does and registers `session` under the id. Under mu_.
  grpc::Status ClaimAgentIdLocked(grpc::ServerContext* context, const v1::Hello& hello, uint64_t id,
                                  const std::shared_ptr<AgentSession>& session);

  bool require_certificate_ = false;
  int64_t replace_silent_after_ms_ = 15'000;
  std::string cluster_id_, db_path_;
  bool take_over_ = false;
  std::atomic<uint64_t> next_session_{1};
  std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<AgentSession>> sessions_;
};

}  // namespace longhaul::rpc

#include "daemon/rpc/agent_service.h"

#include <grpcpp/security/auth_context.h>

#include <chrono>
#include <ctime>
#include <set>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "proto/agent_protocol.h"
#include "proto/agent_refusal.h"

namespace longhaul::rpc {
namespace {

// The names the peer's verified certificate gives: its CN and every subject alternative name.
std::set<std::string> CertificateNames(const grpc::ServerContext& ctx) {
  std::set<std::string> names;
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return names;
  for (const char* prop : {"x509_common_name", "x509_subject_alternative_name"}) {
    for (const grpc::string_ref& v : auth->FindPropertyValues(prop)) {
      names.emplace(v.data(), v.size());
    }
  }
  return names;
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// "127.0.0.1:4567" of the gRPC peer "ipv4:127.0.0.1:4567".
std::string PeerAddress(const std::string& peer) {
  for (std::string_view scheme : {"ipv4:", "ipv6:"}) {
    if (StartsWith(peer, scheme)) return peer.substr(scheme.size());
  }
  return peer;
}

std::string UtcTime(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

// The writing half of one agent stream, and who is on it.
class AgentSession {
 public:
  AgentSession(grpc::ServerContext* ctx,
               grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream,
               std::string agent_id)
      : agent_id_(std::move(agent_id)),
        peer_(PeerAddress(ctx->peer())),
        since_(std::time(nullptr)),
        last_read_ms_(SteadyNowMs()),
        ctx_(ctx),
        stream_(stream),
        writer_([this] { WriteLoop(); }) {}

  const std::string& agent_id() const { return agent_id_; }
  const std::string& peer() const { return peer_; }
  std::time_t since() const { return since_; }
  // Something was read on the stream (a heartbeat at least every heartbeat interval).
  void Heard() { last_read_ms_.store(SteadyNowMs(), std::memory_order_relaxed); }
  int64_t SilentMs() const { return SteadyNowMs() - last_read_ms_.load(std::memory_order_relaxed); }
  bool Ended() const { return ctx_->IsCancelled(); }
  // The first refusal of a duplicate is logged as a warning, the rest (its retries) as debug.
  bool duplicate_logged = false;  // guarded by AgentServiceImpl::mu_

  ~AgentSession() { Shutdown(); }

  void Send(const v1::CoordinatorMessage& msg) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_) return;
      queue_.push_back(msg);
    }
    cv_.notify_one();
  }

  // Cancels the RPC: the handler's Read() returns false and the handler ends the session.
  void Close() { ctx_->TryCancel(); }

  // Stops the writer; after this the stream is not touched again.
  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
  }

 private:
  void WriteLoop() {
    for (;;) {
      std::deque<v1::CoordinatorMessage> batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return done_ || !queue_.empty(); });
        if (done_) return;
        batch.swap(queue_);
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        grpc::WriteOptions opts;
        if (i + 1 < batch.size()) opts.set_buffer_hint();  // coalesce a burst into few frames
        if (!stream_->Write(batch[i], opts)) {
          ctx_->TryCancel();
          return;
        }
      }
    }
  }

  const std::string agent_id_;
  const std::string peer_;
  const std::time_t since_;
  std::atomic<int64_t> last_read_ms_;
  grpc::ServerContext* ctx_;
  grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::CoordinatorMessage> queue_;
  bool done_ = false;
  std::thread writer_;
};

AgentServiceImpl::~AgentServiceImpl() { CloseAll(); }

grpc::Status AgentServiceImpl::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream) {
  v1::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message on an agent stream must be hello");
  }
  absl::Status compatible =
      CheckAgentProtocol(first.hello().protocol_version(), first.hello().agent_id());
  if (!compatible.ok()) {
    GetLogger("rpc")->warn("agent from {} refused: {}", context->peer(),
                           ToStd(compatible.message()));
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, ToStd(compatible.message()));
  }
  const std::string& served = first.hello().cluster_id();
  if (!served.empty() && !cluster_id_.empty() && served != cluster_id_ && !take_over_) {
    std::string why = StrCat(
        "agent '", first.hello().agent_id(), "' serves cluster ", served,
        " but this coordinator's store ", db_path_, " is cluster ", cluster_id_,
        ": the agent's attempts belong to another store. Restore that store (its backup keeps "
        "the cluster id), point the agent at its coordinator, or start longhauld with "
        "--new-cluster to take the agent over (its attempts of the old cluster are stopped)");
    GetLogger("rpc")->error("agent from {} refused: {}", context->peer(), why);
    return grpc::Status(grpc::StatusCode::ABORTED, why);
  }
  if (require_certificate_) {
    const std::string& claimed = first.hello().agent_id();
    std::set<std::string> names = CertificateNames(*context);
    if (names.count(claimed) == 0) {
      std::string why = names.empty()
                            ? StrCat("agent from ", context->peer(), " refused: it claims id '",
                                     claimed, "' but presented no verified client certificate")
                            : StrCat("agent from ", context->peer(), " refused: it claims id '",
                                     claimed, "' but its certificate is for ", Join(names));
      GetLogger("rpc")->warn("{}", why);
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, why);
    }
  }
  uint64_t id = next_session_++;
  auto session = std::make_shared<AgentSession>(context, stream, first.hello().agent_id());
  grpc::Status claimed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    claimed = ClaimAgentIdLocked(context, first.hello(), id, session);
  }
  if (!claimed.ok()) return claimed;  // `session` ends here, never having written
  GetLogger("rpc")->debug("agent session {} from {} ({})", id, first.hello().agent_id(),
                          context->peer());
  loop_->Post([this, id, hello = std::move(*first.mutable_hello())] {
    scheduler_->OnAgentConnected(id, hello);
  });
  // A message that does not parse (a proto3 string that is not UTF-8, say) ends Read() as a
  // closed stream would. The agent, reconnecting, would send it again and again, so it never
  // sends such text: agent/lib/utf8_repair.h.
  for (;;) {
    auto msg = std::make_shared<v1::AgentMessage>();
    if (!stream->Read(msg.get())) break;
    session->Heard();
    loop_->Post([this, id, msg] { scheduler_->OnAgentMessage(id, *msg); });
  }
  loop_->Post([this, id] { scheduler_->OnAgentDisconnected(id); });
  session->Shutdown();
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(id);
  }
  return grpc::Status::OK;
}

grpc::Status AgentServiceImpl::ClaimAgentIdLocked(grpc::ServerContext* context,
                                                  const v1::Hello& hello, uint64_t id,
                                                  const std::shared_ptr<AgentSession>& session) {
  auto log = GetLogger("rpc");
  for (auto& [other_id, other] : sessions_) {
    if (other->agent_id() != hello.agent_id()) continue;
    int64_t silent = other->SilentMs();
    if (!other->Ended() && silent < replace_silent_after_ms_) {
      std::string why = StrCat("agent id '", hello.agent_id(), "' is already connected from ",
                               other->peer(), " (since ", UtcTime(other->since()), ")");
      if (!other->duplicate_logged) {
        other->duplicate_logged = true;
        log->warn("refused a second agent from {}: {}", PeerAddress(context->peer()), why);
      } else {
        log->debug("refused a second agent from {}: {}", PeerAddress(context->peer()), why);
      }
      context->AddTrailingMetadata(kReplaceAfterMetadata, std::to_string(replace_silent_after_ms_));
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, why);
    }
    // Its stream is gone or half-open (a restarted agent's old connection not yet noticed as
    // dead): the new connection replaces it, as the scheduler does with its session.
    log->info("agent {}: its session from {} is {}; the connection from {} replaces it",
              hello.agent_id(), other->peer(),
              other->Ended() ? "ending" : StrCat("silent for ", FormatDurationMs(silent)),
              PeerAddress(context->peer()));
    other->Close();
  }
  sessions_[id] = session;
  return grpc::Status::OK;
}

void AgentServiceImpl::Send(uint64_t session_id, const v1::CoordinatorMessage& msg) {
  std::shared_ptr<AgentSession> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) return;
    s = it->second;
  }
  s->Send(msg);
}

void AgentServiceImpl::Close(uint64_t session_id) {
  std::shared_ptr<AgentSession> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) return;
    s = it->second;
  }
  s->Close();
}

void AgentServiceImpl::CloseAll() {
  std::map<uint64_t, std::shared_ptr<AgentSession>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all = sessions_;
  }
  for (auto& [id, s] : all) s->Close();
}

}  // namespace longhaul::rpc

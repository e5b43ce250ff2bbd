#include "agent/lib/coordinator_session.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "proto/agent_protocol.h"
#include "proto/agent_refusal.h"

namespace longhaul::agent {
namespace {

constexpr int kTlsConnectTimeoutMs = 10'000;
constexpr int kPlainConnectTimeoutMs = 2'000;

int64_t SessionSteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The replace-after of a duplicate-id refusal's trailing metadata, or `fallback`.
int64_t ReplaceAfterMs(const grpc::ClientContext& ctx, int64_t fallback) {
  const auto& md = ctx.GetServerTrailingMetadata();
  auto it = md.find(kReplaceAfterMetadata);
  if (it == md.end()) return fallback;
  std::optional<int64_t> ms = ParseInt64(std::string_view(it->second.data(), it->second.size()));
  return ms && *ms >= 0 ? *ms : fallback;
}

}  // namespace

CoordinatorSession::CoordinatorSession(SessionOptions opts, Callbacks cb)
    : opts_(std::move(opts)), cb_(std::move(cb)) {
  grpc::ChannelArguments args;
  // The channel's own reconnect backoff must not exceed ours, or a coordinator that came back
  // would stay unreachable (fail-fast calls) until the channel's longer backoff ran out.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, static_cast<int>(opts_.initial_backoff_ms));
  // The "min reconnect backoff" is also each connection attempt's timeout (and the first value
  // given wins): a TLS handshake with a busy coordinator takes longer than the 100 ms that
  // suit a plaintext connect to an idle one, and an attempt cut short is only tried again, and
  // cut short again. A plaintext connect gets kPlainConnectTimeoutMs: on a loaded 2-core
  // machine, a coordinator that had just restarted answered the HTTP/2 handshake in more than
  // 100 ms, every attempt was cut short, and the backoff grew until the agent was declared
  // lost. A refused connection still fails at once and is retried at the backoff's pace.
  bool tls = !opts_.tls_ca_pem.empty();
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              tls ? kTlsConnectTimeoutMs
                  : std::max(kPlainConnectTimeoutMs, static_cast<int>(opts_.initial_backoff_ms)));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(opts_.max_backoff_ms));
  if (opts_.keepalive_ms > 0) {
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(opts_.keepalive_ms));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(opts_.keepalive_timeout_ms));
  }
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (tls) {
    creds = grpc::SslCredentials(
        grpc::SslCredentialsOptions{opts_.tls_ca_pem, opts_.tls_key_pem, opts_.tls_cert_pem});
  }
  channel_ = grpc::CreateCustomChannel(opts_.target, creds, args);
  stub_ = v1::AgentService::NewStub(channel_);
}

CoordinatorSession::~CoordinatorSession() { Stop(); }

void CoordinatorSession::Start() {
  thread_ = std::thread([this] { Run(); });
}

void CoordinatorSession::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (active_ctx_ != nullptr) active_ctx_->TryCancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CoordinatorSession::Send(uint64_t generation, v1::AgentMessage msg) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (generation == 0 || generation != active_gen_) return;
    queue_.push_back(std::move(msg));
  }
  cv_.notify_all();
}

int64_t CoordinatorSession::Jittered(int64_t ms) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> d(0.8, 1.2);
  return static_cast<int64_t>(static_cast<double>(ms) * d(rng));
}

void CoordinatorSession::Run() {
  auto log = GetLogger("session");
  int64_t backoff = opts_.initial_backoff_ms;
  uint64_t gen = 0;
  int failures = 0;               // dials in a row that got no Welcome
  int64_t refused_until_ms = -1;  // while refused as a duplicate id: when to give up
  for (;;) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      active_ctx_ = ctx.get();
      active_gen_ = ++gen;
      queue_.clear();
      writer_done_ = false;
    }
    auto stream = stub_->Connect(ctx.get());
    cb_.on_open(gen);
    std::thread writer([&, g = gen] { WriteLoop(g, stream.get(), ctx.get()); });
    bool welcomed = false;
    v1::CoordinatorMessage msg;
    while (stream->Read(&msg)) {
      if (msg.has_welcome() && !welcomed) {
        welcomed = true;
        backoff = opts_.initial_backoff_ms;
        log->info("connected to {} (agent protocol version {})", opts_.target,
                  EffectiveProtocolVersion(msg.welcome().protocol_version()));
      }
      cb_.on_message(gen, std::move(msg));
      msg.Clear();
    }
    {
      // The call has ended, so a Write in progress fails by itself; cancelling (which would
      // hide the real status) is only the fallback for a writer that does not return.
      std::unique_lock<std::mutex> lock(mu_);
      active_gen_ = 0;
      queue_.clear();
      cv_.notify_all();
      if (!cv_.wait_for(lock, std::chrono::seconds(1), [&] { return writer_done_; })) {
        ctx->TryCancel();
      }
    }
    writer.join();
    grpc::Status status = stream->Finish();
    std::string why = status.ok() ? "stream closed by the coordinator" : status.error_message();
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_ctx_ = nullptr;
    }
    cb_.on_close(gen, why);
    if (!welcomed && status.error_code() == grpc::StatusCode::ABORTED) {
      log->error("the coordinator {} refused this agent: {}", opts_.target, why);
      if (cb_.on_refused) cb_.on_refused(why);
      return;
    }
    if (welcomed) {
      log->warn("lost the coordinator {}: {}", opts_.target, why);
      failures = 0;
      refused_until_ms = -1;
    } else if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
      int64_t now = SessionSteadyMs();
      if (refused_until_ms < 0) {
        // The coordinator lets a new connection replace a session silent for replace-after;
        // if that one is this agent's own before a restart, it goes silent now. A few more
        // dials at the slowest pace cover the clocks and the backoff.
        int64_t window = ReplaceAfterMs(*ctx, 15'000) + 2 * opts_.max_backoff_ms;
        refused_until_ms = now + window;
        log->warn(
            "the coordinator {} refused this agent: {}; retrying for {} in case that is this "
            "agent's own earlier connection, not yet noticed as gone",
            opts_.target, why, FormatDurationMs(window));
      } else if (now >= refused_until_ms) {
        if (cb_.on_refused) cb_.on_refused(why);  // the agent logs it and stops
        return;
      }
    } else if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      // The coordinator refused this agent (an agent protocol version it cannot speak): only
      // an upgrade helps, so say so every time and retry at the slowest pace.
      log->error("the coordinator {} refused this agent: {} (retrying in about {} ms)",
                 opts_.target, why, opts_.max_backoff_ms);
      backoff = opts_.max_backoff_ms;
    } else if (failures++ % 60 == 0) {  // once, then about every 5 minutes
      log->warn("cannot reach the coordinator {}: {} (retrying)", opts_.target, why);
    } else {
      log->debug("cannot reach the coordinator {}: {}", opts_.target, why);
    }
    int64_t wait = Jittered(backoff);
    backoff = std::min(backoff * 2, opts_.max_backoff_ms);
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, std::chrono::milliseconds(wait), [&] { return stopping_; })) return;
    }
    // Our backoff has been waited out: the next dial must really try. Otherwise a channel
    // still in its own backoff answers at once with its last failure, and the two backoffs add
    // up (a coordinator back after 7 s was reached only 10 s later).
    grpc::experimental::ChannelResetConnectionBackoff(channel_.get());
  }
}

void CoordinatorSession::WriteLoop(
    uint64_t gen, grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>* stream,
    grpc::ClientContext* ctx) {
  struct Done {
    CoordinatorSession* s;
    ~Done() {
      std::lock_guard<std::mutex> lock(s->mu_);
      s->writer_done_ = true;
      s->cv_.notify_all();
    }
  } done{this};
  for (;;) {
    v1::AgentMessage msg;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || active_gen_ != gen || !queue_.empty(); });
      if (stopping_ || active_gen_ != gen) return;
      msg = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!stream->Write(msg)) {
      ctx->TryCancel();  // the reader sees the end of the stream and re-dials
      return;
    }
  }
}

}  // namespace longhaul::agent

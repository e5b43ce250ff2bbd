#include "tests/agent/fake_coordinator.h"

#include <chrono>

namespace longhaul::testing {

FakeCoordinator::FakeCoordinator(int port) {
  grpc::ServerBuilder b;
  b.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                     &port_);
  b.RegisterService(this);
  server_ = b.BuildAndStart();
}

FakeCoordinator::~FakeCoordinator() { Shutdown(); }

void FakeCoordinator::Shutdown() {
  if (server_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stalled_ = false;
    if (ctx_ != nullptr) ctx_->TryCancel();
  }
  unstalled_.notify_all();
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  server_.reset();
}

void FakeCoordinator::set_stalled(bool on) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stalled_ = on;
  }
  unstalled_.notify_all();
}

void FakeCoordinator::set_auto_ack(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  auto_ack_ = on;
}

bool FakeCoordinator::Send(const v1::CoordinatorMessage& msg) {
  grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream = stream_;
  }
  if (stream == nullptr) return false;
  std::lock_guard<std::mutex> lock(write_mu_);
  return stream->Write(msg);
}

bool FakeCoordinator::Start(const v1::StartAttempt& start) {
  v1::CoordinatorMessage m;
  *m.mutable_start() = start;
  return Send(m);
}

bool FakeCoordinator::Cancel(int64_t attempt_id, const std::string& reason, int64_t grace_ms) {
  v1::CoordinatorMessage m;
  m.mutable_cancel()->set_attempt_id(attempt_id);
  m.mutable_cancel()->set_reason(reason);
  m.mutable_cancel()->set_grace_ms(grace_ms);
  return Send(m);
}

bool FakeCoordinator::AckEvents(int64_t attempt_id, int64_t up_to_seq) {
  v1::CoordinatorMessage m;
  m.mutable_ack_events()->set_attempt_id(attempt_id);
  m.mutable_ack_events()->set_up_to_seq(up_to_seq);
  return Send(m);
}

grpc::Status FakeCoordinator::Connect(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream) {
  {
    // A new stream from the agent supersedes the old one, which may be dead without either
    // side having noticed (a dropped network), as the real coordinator does.
    std::unique_lock<std::mutex> lock(mu_);
    if (ctx_ != nullptr) ctx_->TryCancel();
    unstalled_.notify_all();
    stream_gone_.wait(lock, [&] { return stream_ == nullptr; });
    stream_ = stream;
    ctx_ = ctx;
    exit_seen_on_stream_.clear();
  }
  v1::AgentMessage msg;
  grpc::Status result = grpc::Status::OK;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      unstalled_.wait(lock, [&] { return !stalled_ || ctx->IsCancelled(); });
    }
    if (!stream->Read(&msg)) break;
    if (msg.has_hello()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (refusal_.has_value()) {
        ++refused_;
        hello_ = msg.hello();
        result = *refusal_;
        break;
      }
    }
    Record(msg, stream);
  }
  std::lock_guard<std::mutex> lock(mu_);
  stream_ = nullptr;
  ctx_ = nullptr;
  stream_gone_.notify_all();
  return result;
}

void FakeCoordinator::set_refusal(std::optional<grpc::Status> refusal) {
  std::lock_guard<std::mutex> lock(mu_);
  refusal_ = std::move(refusal);
}

int FakeCoordinator::refused_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

void FakeCoordinator::Record(
    const v1::AgentMessage& msg,
    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream) {
  std::vector<v1::CoordinatorMessage> replies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    switch (msg.msg_case()) {
      case v1::AgentMessage::kHello: {
        ++hellos_;
        hello_ = msg.hello();
        v1::CoordinatorMessage w;
        w.mutable_welcome()->set_coordinator_started_at_ms(1);
        replies.push_back(w);
        break;
      }
      case v1::AgentMessage::kHeartbeat:
        ++heartbeats_;
        break;
      case v1::AgentMessage::kStarted:
        started_[msg.started().attempt_id()].push_back(msg.started());
        started_time_.emplace(msg.started().attempt_id(), std::chrono::steady_clock::now());
        break;
      case v1::AgentMessage::kEvents: {
        int64_t id = msg.events().attempt_id();
        if (exit_seen_on_stream_[id]) event_after_exit_ = true;
        int64_t max = 0;
        for (const auto& e : msg.events().events()) {
          if (events_[id].emplace(e.seq(), e.line()).second) stamps_[id].push_back(e.ts_ms());
          ++received_[id];
          max = std::max(max, e.seq());
        }
        if (auto_ack_) {
          v1::CoordinatorMessage ack;
          ack.mutable_ack_events()->set_attempt_id(id);
          ack.mutable_ack_events()->set_up_to_seq(max);
          replies.push_back(ack);
        }
        break;
      }
      case v1::AgentMessage::kExited: {
        int64_t id = msg.exited().attempt_id();
        exited_[id] = msg.exited();
        exited_time_.emplace(id, std::chrono::steady_clock::now());
        ++exit_count_[id];
        exit_seen_on_stream_[id] = true;
        if (auto_ack_) {
          v1::CoordinatorMessage ack;
          ack.mutable_ack_exit()->set_attempt_id(id);
          replies.push_back(ack);
        }
        break;
      }
      case v1::AgentMessage::kLog:
        logs_[msg.log().request_id()] = msg.log();
        break;
      case v1::AgentMessage::kArtifacts:
        artifacts_[msg.artifacts().request_id()] = msg.artifacts();
        break;
      case v1::AgentMessage::MSG_NOT_SET:
        break;
    }
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  for (const auto& r : replies) stream->Write(r);
}

bool FakeCoordinator::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stream_ != nullptr && hello_.has_value();
}

int FakeCoordinator::hello_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hellos_;
}

std::optional<v1::Hello> FakeCoordinator::last_hello() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hello_;
}

std::map<int64_t, std::string> FakeCoordinator::events(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(id);
  return it == events_.end() ? std::map<int64_t, std::string>() : it->second;
}

std::vector<int64_t> FakeCoordinator::event_stamps(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stamps_.find(id);
  return it == stamps_.end() ? std::vector<int64_t>() : it->second;
}

int64_t FakeCoordinator::events_received(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = received_.find(id);
  return it == received_.end() ? 0 : it->second;
}

int64_t FakeCoordinator::max_seq_received(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(id);
  return it == events_.end() || it->second.empty() ? 0 : it->second.rbegin()->first;
}

std::vector<v1::AttemptStarted> FakeCoordinator::started(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = started_.find(id);
  return it == started_.end() ? std::vector<v1::AttemptStarted>() : it->second;
}

std::optional<v1::AttemptExited> FakeCoordinator::exited(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exited_.find(id);
  if (it == exited_.end()) return std::nullopt;
  return it->second;
}

int FakeCoordinator::exits_received(int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exit_count_.find(id);
  return it == exit_count_.end() ? 0 : it->second;
}

std::optional<v1::LogData> FakeCoordinator::log(int64_t request_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = logs_.find(request_id);
  if (it == logs_.end()) return std::nullopt;
  return it->second;
}

std::optional<v1::ArtifactCheck> FakeCoordinator::artifacts(int64_t request_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = artifacts_.find(request_id);
  if (it == artifacts_.end()) return std::nullopt;
  return it->second;
}

int FakeCoordinator::heartbeats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return heartbeats_;
}

bool FakeCoordinator::saw_event_after_exit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return event_after_exit_;
}

std::optional<std::chrono::steady_clock::time_point> FakeCoordinator::started_time(
    int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = started_time_.find(id);
  if (it == started_time_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::chrono::steady_clock::time_point> FakeCoordinator::exited_time(
    int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exited_time_.find(id);
  if (it == exited_time_.end()) return std::nullopt;
  return it->second;
}

}  // namespace longhaul::testing

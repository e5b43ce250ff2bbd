#include "tests/cli/fake_longhaul_service.h"

#include <cstdlib>

namespace longhaul::cli {

void FakeLonghaulService::Record(grpc::ServerContext* ctx) {
  auto it = ctx->client_metadata().find("authorization");
  authorization.push_back(
      it == ctx->client_metadata().end() ? "" : std::string(it->second.data(), it->second.size()));
}

grpc::Status FakeLonghaulService::SubmitRun(grpc::ServerContext* ctx,
                                            const v1::SubmitRunRequest* req,
                                            v1::SubmitRunResponse* resp) {
  std::lock_guard<std::mutex> lock(mu);
  Record(ctx);
  submits.push_back(*req);
  if (submit_failures > 0) {
    --submit_failures;
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
  }
  for (const auto& e : plan) *resp->add_plan() = e;
  if (req->dry_run()) return grpc::Status::OK;
  v1::Run run;
  run.set_id(next_run_id);
  run.set_workflow_name("hello");
  run.set_status(v1::RUN_PENDING);
  runs[run.id()] = run;
  *resp->mutable_run() = run;
  return grpc::Status::OK;
}

grpc::Status FakeLonghaulService::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                                         v1::Run* resp) {
  std::lock_guard<std::mutex> lock(mu);
  Record(ctx);
  ++get_runs;
  if (auto steps = run_steps.find(req->id()); steps != run_steps.end()) {
    *resp = steps->second.front();
    if (steps->second.size() > 1) steps->second.erase(steps->second.begin());
    return grpc::Status::OK;
  }
  auto it = runs.find(req->id());
  if (it == runs.end()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no run " + std::to_string(req->id()));
  }
  *resp = it->second;
  if (!req->include_attempts()) {
    for (v1::Stage& s : *resp->mutable_stages()) s.clear_attempts();
  }
  return grpc::Status::OK;
}

grpc::Status FakeLonghaulService::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                                           v1::ListRunsResponse* resp) {
  std::lock_guard<std::mutex> lock(mu);
  Record(ctx);
  list_runs.push_back(*req);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) *resp->add_runs() = it->second;
  return grpc::Status::OK;
}

grpc::Status FakeLonghaulService::CancelRun(grpc::ServerContext* ctx,
                                            const v1::CancelRunRequest* req, v1::Run* resp) {
  std::lock_guard<std::mutex> lock(mu);
  Record(ctx);
  auto it = runs.find(req->id());
  if (it == runs.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no run");
  it->second.set_status(v1::RUN_CANCELLED);
  it->second.set_reason("cancelled by the user");
  *resp = it->second;
  return grpc::Status::OK;
}

grpc::Status FakeLonghaulService::RetryStage(grpc::ServerContext* ctx,
                                             const v1::RetryStageRequest* req, v1::Run* resp) {
  std::lock_guard<std::mutex> lock(mu);
  Record(ctx);
  retries.push_back(*req);
  auto it = runs.find(req->run_id());
  if (it == runs.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no run");
  if (!req->stage().empty() && req->stage() != "left") {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "run has no stage '" + req->stage() + "'");
  }
  it->second.set_status(v1::RUN_RUNNING);
  it->second.clear_reason();
  *resp = it->second;
  return grpc::Status::OK;
}

grpc::Status FakeLonghaulService::WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                                           grpc::ServerWriter<v1::RunUpdate>* writer) {
  std::vector<v1::RunUpdate> updates;
  {
    std::lock_guard<std::mutex> lock(mu);
    Record(ctx);
    if (!runs.count(req->id())) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no run " + std::to_string(req->id()));
    }
    updates = watch_updates;
  }
  for (const auto& u : updates) writer->Write(u);
  return grpc::Status::OK;
}

grpc::Status FakeLonghaulService::ListAgents(grpc::ServerContext* ctx,
                                             const v1::ListAgentsRequest* req,
                                             v1::ListAgentsResponse* resp) {
  std::lock_guard<std::mutex> lock(mu);
  Record(ctx);
  for (const auto& a : agents) *resp->add_agents() = a;
  return grpc::Status::OK;
}

grpc::Status FakeLonghaulService::ReadLog(grpc::ServerContext* ctx, const v1::ReadLogRequest* req,
                                          v1::ReadLogResponse* resp) {
  std::lock_guard<std::mutex> lock(mu);
  Record(ctx);
  read_logs.push_back(*req);
  if (!runs.count(req->run_id())) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no run");
  resp->set_attempt(2);
  resp->set_attempt_id(77);
  resp->set_offset(req->offset());
  if (log_step_ < log_steps.size()) {
    std::string step = log_steps[log_step_++];
    if (step == kAgentAway) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "agent 'node-a' is not connected");
    }
    log_size_ += static_cast<int64_t>(step.size());
    resp->set_data(step);
    resp->set_next_offset(req->offset() + static_cast<int64_t>(step.size()));
    return grpc::Status::OK;
  }
  resp->set_next_offset(req->offset());
  resp->set_finished(true);
  return grpc::Status::OK;
}

FakeServer::FakeServer(FakeLonghaulService* service) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(service);
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) std::abort();
}

FakeServer::~FakeServer() { server_->Shutdown(); }

}  // namespace longhaul::cli

#include "daemon/rpc/client_service.h"

#include "daemon/rpc/status_util.h"

namespace longhaul::rpc {
namespace {

// Copies an OK result into `resp`; returns the status either way.
template <typename T>
grpc::Status Answer(Result<T> result, T* resp) {
  if (!result.ok()) return ToGrpc(result.status());
  *resp = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status ClientServiceImpl::SubmitRun(grpc::ServerContext*, const v1::SubmitRunRequest* req,
                                          v1::SubmitRunResponse* resp) {
  return Answer(api_->SubmitRun(*req), resp);
}

grpc::Status ClientServiceImpl::PivotRun(grpc::ServerContext*, const v1::PivotRunRequest* req,
                                         v1::SubmitRunResponse* resp) {
  return Answer(api_->PivotRun(*req), resp);
}

grpc::Status ClientServiceImpl::GetRun(grpc::ServerContext*, const v1::GetRunRequest* req,
                                       v1::Run* resp) {
  return Answer(api_->GetRun(*req), resp);
}

grpc::Status ClientServiceImpl::ListRuns(grpc::ServerContext*, const v1::ListRunsRequest* req,
                                         v1::ListRunsResponse* resp) {
  return Answer(api_->ListRuns(*req), resp);
}

grpc::Status ClientServiceImpl::CancelRun(grpc::ServerContext*, const v1::CancelRunRequest* req,
                                          v1::Run* resp) {
  return Answer(api_->CancelRun(*req), resp);
}

grpc::Status ClientServiceImpl::RetryStage(grpc::ServerContext*, const v1::RetryStageRequest* req,
                                           v1::Run* resp) {
  return Answer(api_->RetryStage(*req), resp);
}

grpc::Status ClientServiceImpl::WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                                         grpc::ServerWriter<v1::RunUpdate>* writer) {
  auto watcher = std::make_shared<scheduler::Watcher>();
  Status registered = api_->Watch(req->id(), watcher);
  if (!registered.ok()) return ToGrpc(registered);
  for (;;) {
    if (ctx->IsCancelled()) {
      watcher->Cancel();
      return grpc::Status::CANCELLED;
    }
    v1::RunUpdate update;
    bool final = false;
    if (!watcher->Next(&update, &final, 250)) continue;
    if (!writer->Write(update)) {
      watcher->Cancel();
      return grpc::Status::CANCELLED;
    }
    if (final) return grpc::Status::OK;
  }
}

grpc::Status ClientServiceImpl::ListAgents(grpc::ServerContext*, const v1::ListAgentsRequest*,
                                           v1::ListAgentsResponse* resp) {
  return Answer(api_->ListAgents(), resp);
}

grpc::Status ClientServiceImpl::ReadLog(grpc::ServerContext*, const v1::ReadLogRequest* req,
                                        v1::ReadLogResponse* resp) {
  return Answer(api_->ReadLog(*req), resp);
}

grpc::Status ClientServiceImpl::ListEvents(grpc::ServerContext*, const v1::ListEventsRequest* req,
                                           v1::ListEventsResponse* resp) {
  return Answer(api_->ListEvents(*req), resp);
}

grpc::Status ClientServiceImpl::ListAttempts(grpc::ServerContext*,
                                             const v1::ListAttemptsRequest* req,
                                             v1::ListAttemptsResponse* resp) {
  return Answer(api_->ListAttempts(*req), resp);
}

grpc::Status ClientServiceImpl::ListMetrics(grpc::ServerContext*,
                                            const v1::ListMetricsRequest* req,
                                            v1::ListMetricsResponse* resp) {
  return Answer(api_->ListMetrics(*req), resp);
}

}  // namespace longhaul::rpc

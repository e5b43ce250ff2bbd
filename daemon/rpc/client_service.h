// LonghaulService: the client API over gRPC. Every call is ClientApi's (client_api.h); this
// layer only converts statuses and streams WatchRun.
#pragma once

#include "daemon/rpc/client_api.h"
#include "longhaul/v1/client.grpc.pb.h"

namespace longhaul::rpc {

class ClientServiceImpl final : public v1::LonghaulService::Service {
 public:
  explicit ClientServiceImpl(ClientApi* api) : api_(api) {}

  grpc::Status SubmitRun(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req,
                         v1::SubmitRunResponse* resp) override;
  grpc::Status PivotRun(grpc::ServerContext* ctx, const v1::PivotRunRequest* req,
                        v1::SubmitRunResponse* resp) override;
  grpc::Status GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                      v1::Run* resp) override;
  grpc::Status ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                        v1::ListRunsResponse* resp) override;
  grpc::Status CancelRun(grpc::ServerContext* ctx, const v1::CancelRunRequest* req,
                         v1::Run* resp) override;
  grpc::Status RetryStage(grpc::ServerContext* ctx, const v1::RetryStageRequest* req,
                          v1::Run* resp) override;
  grpc::Status WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                        grpc::ServerWriter<v1::RunUpdate>* writer) override;
  grpc::Status ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest* req,
                          v1::ListAgentsResponse* resp) override;
  grpc::Status ReadLog(grpc::ServerContext* ctx, const v1::ReadLogRequest* req,
                       v1::ReadLogResponse* resp) override;
  grpc::Status ListEvents(grpc::ServerContext* ctx, const v1::ListEventsRequest* req,
                          v1::ListEventsResponse* resp) override;
  grpc::Status ListAttempts(grpc::ServerContext* ctx, const v1::ListAttemptsRequest* req,
                            v1::ListAttemptsResponse* resp) override;
  grpc::Status ListMetrics(grpc::ServerContext* ctx, const v1::ListMetricsRequest* req,
                           v1::ListMetricsResponse* resp) override;

 private:
  ClientApi* api_;
};

}  // namespace longhaul::rpc

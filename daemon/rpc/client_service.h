// LonghaulService: the client API over gRPC. Every call is ClientApi's (client_api.h); this
// layer only checks the caller, converts statuses and streams WatchRun.
//
// Every method first asks the ActionAuthorizer (through CheckCall) whether the caller may do it and
// answers UNAUTHENTICATED or PERMISSION_DENIED, having touched nothing, when not. Mutations
// are written to the audit trail with their outcome.
#pragma once

#include "daemon/auth/authorizer.h"
#include "daemon/rpc/client_api.h"
#include "longhaul/v1/client.grpc.pb.h"

namespace longhaul::rpc {

class ClientServiceImpl final : public v1::LonghaulService::Service {
 public:
  // `api` and `authorizer` are not owned and outlive this service.
  ClientServiceImpl(ClientApi* api, const auth::ActionAuthorizer* authorizer)
      : api_(api), authorizer_(authorizer) {}

  grpc::Status SubmitRun(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req,
                         v1::SubmitRunResponse* resp) override;
  grpc::Status PivotRun(grpc::ServerContext* ctx, const v1::PivotRunRequest* req,
                        v1::SubmitRunResponse* resp) override;
  grpc::Status GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                      v1::Run* resp) override;
  grpc::Status ListStages(grpc::ServerContext* ctx, const v1::ListStagesRequest* req,
                          v1::ListStagesResponse* resp) override;
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
  grpc::Status Backup(grpc::ServerContext* ctx, const v1::BackupRequest* req,
                      v1::BackupResponse* resp) override;
  grpc::Status DrainGpu(grpc::ServerContext* ctx, const v1::DrainGpuRequest* req,
                        v1::DrainGpuResponse* resp) override;
  grpc::Status DrainAgent(grpc::ServerContext* ctx, const v1::DrainAgentRequest* req,
                          v1::DrainAgentResponse* resp) override;
  grpc::Status Reserve(grpc::ServerContext* ctx, const v1::ReserveRequest* req,
                       v1::Reservation* resp) override;
  grpc::Status Unreserve(grpc::ServerContext* ctx, const v1::UnreserveRequest* req,
                         v1::Reservation* resp) override;
  grpc::Status ListReservations(grpc::ServerContext* ctx, const v1::ListReservationsRequest* req,
                                v1::ListReservationsResponse* resp) override;
  grpc::Status SetRunBudget(grpc::ServerContext* ctx, const v1::SetRunBudgetRequest* req,
                            v1::Run* resp) override;
  grpc::Status SetRunPriority(grpc::ServerContext* ctx, const v1::SetRunPriorityRequest* req,
                              v1::Run* resp) override;
  grpc::Status SetBudget(grpc::ServerContext* ctx, const v1::SetBudgetRequest* req,
                         v1::ScopeBudget* resp) override;
  grpc::Status ListBudgets(grpc::ServerContext* ctx, const v1::ListBudgetsRequest* req,
                           v1::ListBudgetsResponse* resp) override;
  grpc::Status RemoveBudget(grpc::ServerContext* ctx, const v1::RemoveBudgetRequest* req,
                            v1::ScopeBudget* resp) override;
  grpc::Status SetQuota(grpc::ServerContext* ctx, const v1::SetQuotaRequest* req,
                        v1::Quota* resp) override;
  grpc::Status RemoveQuota(grpc::ServerContext* ctx, const v1::RemoveQuotaRequest* req,
                           v1::Quota* resp) override;
  grpc::Status ListQuotas(grpc::ServerContext* ctx, const v1::ListQuotasRequest* req,
                          v1::ListQuotasResponse* resp) override;
  grpc::Status ListAudit(grpc::ServerContext* ctx, const v1::ListAuditRequest* req,
                         v1::ListAuditResponse* resp) override;
  grpc::Status CollectGarbage(grpc::ServerContext* ctx, const v1::GcRequest* req,
                              v1::GcResponse* resp) override;
  grpc::Status ListAttempts(grpc::ServerContext* ctx, const v1::ListAttemptsRequest* req,
                            v1::ListAttemptsResponse* resp) override;
  grpc::Status ListMetrics(grpc::ServerContext* ctx, const v1::ListMetricsRequest* req,
                           v1::ListMetricsResponse* resp) override;
  grpc::Status ListNotifications(grpc::ServerContext* ctx, const v1::ListNotificationsRequest* req,
                                 v1::ListNotificationsResponse* resp) override;
  grpc::Status TestNotify(grpc::ServerContext* ctx, const v1::TestNotifyRequest* req,
                          v1::TestNotifyResponse* resp) override;
  grpc::Status GetSweep(grpc::ServerContext* ctx, const v1::GetSweepRequest* req,
                        v1::GetSweepResponse* resp) override;
  grpc::Status GetLineage(grpc::ServerContext* ctx, const v1::GetLineageRequest* req,
                          v1::GetLineageResponse* resp) override;
  grpc::Status SetTag(grpc::ServerContext* ctx, const v1::SetTagRequest* req,
                      v1::Tag* resp) override;
  grpc::Status RemoveTag(grpc::ServerContext* ctx, const v1::RemoveTagRequest* req,
                         v1::Tag* resp) override;
  grpc::Status ListTags(grpc::ServerContext* ctx, const v1::ListTagsRequest* req,
                        v1::ListTagsResponse* resp) override;

 private:
  ClientApi* api_;
  const auth::ActionAuthorizer* authorizer_;
};

}  // namespace longhaul::rpc

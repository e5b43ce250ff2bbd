#include "daemon/rpc/client_service.h"

#include "daemon/rpc/audited_call.h"
#include "daemon/rpc/call_auth.h"
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

// A read: the check, then the call.
template <typename T, typename Fn>
grpc::Status Read(const auth::ActionAuthorizer& authorizer, const grpc::ServerContext* ctx,
                  auth::Action action, T* resp, Fn&& fn) {
  auto principal = CheckCall(authorizer, ctx, action);
  if (!principal.ok()) return ToGrpc(principal.status());
  return Answer<T>(fn(), resp);
}

// A mutation: the check, then the call and its outcome into the audit trail.
template <typename Request, typename T>
grpc::Status Mutate(ClientApi* api, const auth::ActionAuthorizer& authorizer,
                    const grpc::ServerContext* ctx, auth::Action action, const Request& req,
                    T* resp, Result<T> (ClientApi::*call)(const Request&)) {
  auto principal = CheckCall(authorizer, ctx, action);
  if (!principal.ok()) return ToGrpc(principal.status());
  return Answer<T>(AuditedCall(api, *principal, action, req, call), resp);
}

// Mutate, with the caller's name put in the request's `by` first: who did it, on the record of
// what it changed (a run's budget, a GPU's drain, a tag).
template <typename Request, typename T>
grpc::Status MutateAsCaller(ClientApi* api, const auth::ActionAuthorizer& authorizer,
                            const grpc::ServerContext* ctx, auth::Action action,
                            const Request& req, T* resp,
                            Result<T> (ClientApi::*call)(const Request&)) {
  auto principal = CheckCall(authorizer, ctx, action);
  if (!principal.ok()) return ToGrpc(principal.status());
  Request named = req;
  named.set_by(principal->name);
  return Answer<T>(AuditedCall(api, *principal, action, named, call), resp);
}

}  // namespace

grpc::Status ClientServiceImpl::SubmitRun(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req,
                                          v1::SubmitRunResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kSubmitRun);
  if (!principal.ok()) return ToGrpc(principal.status());
  v1::SubmitRunRequest named = *req;
  *named.mutable_submitter() = SubmitterOf(*principal);  // who submits, on the run's record
  return Answer<v1::SubmitRunResponse>(
      AuditedCall(api_, *principal, auth::Action::kSubmitRun, named, &ClientApi::SubmitRun), resp);
}

grpc::Status ClientServiceImpl::PivotRun(grpc::ServerContext* ctx, const v1::PivotRunRequest* req,
                                         v1::SubmitRunResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kPivotRun);
  if (!principal.ok()) return ToGrpc(principal.status());
  v1::PivotRunRequest named = *req;
  *named.mutable_submitter() = SubmitterOf(*principal);
  return Answer<v1::SubmitRunResponse>(
      AuditedCall(api_, *principal, auth::Action::kPivotRun, named, &ClientApi::PivotRun), resp);
}

grpc::Status ClientServiceImpl::CancelRun(grpc::ServerContext* ctx, const v1::CancelRunRequest* req,
                                          v1::Run* resp) {
  return Mutate(api_, *authorizer_, ctx, auth::Action::kCancelRun, *req, resp,
                &ClientApi::CancelRun);
}

grpc::Status ClientServiceImpl::RetryStage(grpc::ServerContext* ctx,
                                           const v1::RetryStageRequest* req, v1::Run* resp) {
  return Mutate(api_, *authorizer_, ctx, auth::Action::kRetryStage, *req, resp,
                &ClientApi::RetryStage);
}

grpc::Status ClientServiceImpl::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                                       v1::Run* resp) {
  return Read(*authorizer_, ctx, auth::Action::kGetRun, resp, [&] { return api_->GetRun(*req); });
}

grpc::Status ClientServiceImpl::ListStages(grpc::ServerContext* ctx,
                                           const v1::ListStagesRequest* req,
                                           v1::ListStagesResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kGetRun, resp,
              [&] { return api_->ListStages(*req); });
}

grpc::Status ClientServiceImpl::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                                         v1::ListRunsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListRuns, resp,
              [&] { return api_->ListRuns(*req); });
}

grpc::Status ClientServiceImpl::WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                                         grpc::ServerWriter<v1::RunUpdate>* writer) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kWatchRun);
  if (!principal.ok()) return ToGrpc(principal.status());
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

grpc::Status ClientServiceImpl::ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest*,
                                           v1::ListAgentsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListAgents, resp,
              [&] { return api_->ListAgents(); });
}

grpc::Status ClientServiceImpl::ReadLog(grpc::ServerContext* ctx, const v1::ReadLogRequest* req,
                                        v1::ReadLogResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kReadLog, resp, [&] { return api_->ReadLog(*req); });
}

grpc::Status ClientServiceImpl::ListEvents(grpc::ServerContext* ctx,
                                           const v1::ListEventsRequest* req,
                                           v1::ListEventsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListEvents, resp,
              [&] { return api_->ListEvents(*req); });
}

grpc::Status ClientServiceImpl::CollectGarbage(grpc::ServerContext* ctx, const v1::GcRequest* req,
                                               v1::GcResponse* resp) {
  return Mutate(api_, *authorizer_, ctx, auth::Action::kCollectGarbage, *req, resp,
                &ClientApi::CollectGarbage);
}

grpc::Status ClientServiceImpl::ListAudit(grpc::ServerContext* ctx, const v1::ListAuditRequest* req,
                                          v1::ListAuditResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListAudit, resp,
              [&] { return api_->ListAudit(*req); });
}

grpc::Status ClientServiceImpl::Backup(grpc::ServerContext* ctx, const v1::BackupRequest* req,
                                       v1::BackupResponse* resp) {
  return Mutate(api_, *authorizer_, ctx, auth::Action::kBackup, *req, resp, &ClientApi::Backup);
}

grpc::Status ClientServiceImpl::SetRunBudget(grpc::ServerContext* ctx,
                                             const v1::SetRunBudgetRequest* req, v1::Run* resp) {
  return MutateAsCaller(api_, *authorizer_, ctx, auth::Action::kSetRunBudget, *req, resp,
                        &ClientApi::SetRunBudget);
}

grpc::Status ClientServiceImpl::SetTag(grpc::ServerContext* ctx, const v1::SetTagRequest* req,
                                       v1::Tag* resp) {
  return MutateAsCaller(api_, *authorizer_, ctx, auth::Action::kSetTag, *req, resp,
                        &ClientApi::SetTag);
}

grpc::Status ClientServiceImpl::RemoveTag(grpc::ServerContext* ctx,
                                          const v1::RemoveTagRequest* req, v1::Tag* resp) {
  return Mutate(api_, *authorizer_, ctx, auth::Action::kRemoveTag, *req, resp,
                &ClientApi::RemoveTag);
}

grpc::Status ClientServiceImpl::ListTags(grpc::ServerContext* ctx, const v1::ListTagsRequest* req,
                                         v1::ListTagsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListTags, resp,
              [&] { return api_->ListTags(*req); });
}

grpc::Status ClientServiceImpl::SetRunPriority(grpc::ServerContext* ctx,
                                               const v1::SetRunPriorityRequest* req,
                                               v1::Run* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kSetRunPriority);
  if (!principal.ok()) return ToGrpc(principal.status());
  v1::SetRunPriorityRequest named = *req;
  *named.mutable_submitter() = SubmitterOf(*principal);  // whose rule applies
  return Answer<v1::Run>(AuditedCall(api_, *principal, auth::Action::kSetRunPriority, named,
                                     &ClientApi::SetRunPriority),
                         resp);
}

grpc::Status ClientServiceImpl::SetBudget(grpc::ServerContext* ctx, const v1::SetBudgetRequest* req,
                                          v1::ScopeBudget* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kSetBudget);
  if (!principal.ok()) return ToGrpc(principal.status());
  v1::SetBudgetRequest named = *req;
  named.set_by(principal->name);  // who set it, on the budget's record
  return Answer<v1::ScopeBudget>(
      AuditedCall(api_, *principal, auth::Action::kSetBudget, named, &ClientApi::SetBudget), resp);
}

grpc::Status ClientServiceImpl::ListBudgets(grpc::ServerContext* ctx,
                                            const v1::ListBudgetsRequest* req,
                                            v1::ListBudgetsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListBudgets, resp,
              [&] { return api_->ListBudgets(*req); });
}

grpc::Status ClientServiceImpl::RemoveBudget(grpc::ServerContext* ctx,
                                             const v1::RemoveBudgetRequest* req,
                                             v1::ScopeBudget* resp) {
  return MutateAsCaller(api_, *authorizer_, ctx, auth::Action::kRemoveBudget, *req, resp,
                        &ClientApi::RemoveBudget);
}

grpc::Status ClientServiceImpl::SetQuota(grpc::ServerContext* ctx, const v1::SetQuotaRequest* req,
                                         v1::Quota* resp) {
  return MutateAsCaller(api_, *authorizer_, ctx, auth::Action::kSetQuota, *req, resp,
                        &ClientApi::SetQuota);
}

grpc::Status ClientServiceImpl::RemoveQuota(grpc::ServerContext* ctx,
                                            const v1::RemoveQuotaRequest* req, v1::Quota* resp) {
  return MutateAsCaller(api_, *authorizer_, ctx, auth::Action::kRemoveQuota, *req, resp,
                        &ClientApi::RemoveQuota);
}

grpc::Status ClientServiceImpl::ListQuotas(grpc::ServerContext* ctx,
                                           const v1::ListQuotasRequest* req,
                                           v1::ListQuotasResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListQuotas, resp,
              [&] { return api_->ListQuotas(*req); });
}

grpc::Status ClientServiceImpl::DrainGpu(grpc::ServerContext* ctx, const v1::DrainGpuRequest* req,
                                         v1::DrainGpuResponse* resp) {
  return MutateAsCaller(api_, *authorizer_, ctx, auth::Action::kDrainGpu, *req, resp,
                        &ClientApi::DrainGpu);
}

grpc::Status ClientServiceImpl::DrainAgent(grpc::ServerContext* ctx,
                                           const v1::DrainAgentRequest* req,
                                           v1::DrainAgentResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kDrainAgent);
  if (!principal.ok()) return ToGrpc(principal.status());
  v1::DrainAgentRequest named = *req;
  named.set_by(principal->name);  // who drained it, on the agent's record
  return Answer<v1::DrainAgentResponse>(
      AuditedCall(api_, *principal, auth::Action::kDrainAgent, named, &ClientApi::DrainAgent),
      resp);
}

grpc::Status ClientServiceImpl::Reserve(grpc::ServerContext* ctx, const v1::ReserveRequest* req,
                                        v1::Reservation* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kReserve);
  if (!principal.ok()) return ToGrpc(principal.status());
  v1::ReserveRequest named = *req;
  named.set_by(principal->name);  // who reserved, on the reservation's record
  return Answer<v1::Reservation>(
      AuditedCall(api_, *principal, auth::Action::kReserve, named, &ClientApi::Reserve), resp);
}

grpc::Status ClientServiceImpl::Unreserve(grpc::ServerContext* ctx, const v1::UnreserveRequest* req,
                                          v1::Reservation* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kUnreserve);
  if (!principal.ok()) return ToGrpc(principal.status());
  v1::UnreserveRequest named = *req;
  named.set_by(principal->name);
  return Answer<v1::Reservation>(
      AuditedCall(api_, *principal, auth::Action::kUnreserve, named, &ClientApi::Unreserve), resp);
}

grpc::Status ClientServiceImpl::ListReservations(grpc::ServerContext* ctx,
                                                 const v1::ListReservationsRequest* req,
                                                 v1::ListReservationsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListReservations, resp,
              [&] { return api_->ListReservations(*req); });
}

grpc::Status ClientServiceImpl::ListAttempts(grpc::ServerContext* ctx,
                                             const v1::ListAttemptsRequest* req,
                                             v1::ListAttemptsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListAttempts, resp,
              [&] { return api_->ListAttempts(*req); });
}

grpc::Status ClientServiceImpl::ListMetrics(grpc::ServerContext* ctx,
                                            const v1::ListMetricsRequest* req,
                                            v1::ListMetricsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListMetrics, resp,
              [&] { return api_->ListMetrics(*req); });
}

grpc::Status ClientServiceImpl::ListNotifications(grpc::ServerContext* ctx,
                                                  const v1::ListNotificationsRequest* req,
                                                  v1::ListNotificationsResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kListNotifications, resp,
              [&] { return api_->ListNotifications(*req); });
}

grpc::Status ClientServiceImpl::TestNotify(grpc::ServerContext* ctx,
                                           const v1::TestNotifyRequest* req,
                                           v1::TestNotifyResponse* resp) {
  return Mutate(api_, *authorizer_, ctx, auth::Action::kTestNotify, *req, resp,
                &ClientApi::TestNotify);
}

grpc::Status ClientServiceImpl::GetSweep(grpc::ServerContext* ctx, const v1::GetSweepRequest* req,
                                         v1::GetSweepResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kGetRun, resp, [&] { return api_->GetSweep(*req); });
}

grpc::Status ClientServiceImpl::GetLineage(grpc::ServerContext* ctx,
                                           const v1::GetLineageRequest* req,
                                           v1::GetLineageResponse* resp) {
  return Read(*authorizer_, ctx, auth::Action::kGetRun, resp,
              [&] { return api_->GetLineage(*req); });
}

}  // namespace longhaul::rpc

// Coordinator over gRPC (longhaul.v1.LonghaulService): TLS when a CA is given (the
// coordinator's certificate must chain to it and name the address's host), else plaintext.
//
// Every unary call has a deadline (`rpc_timeout_ms`; SubmitRun and PivotRun add 10 s per MiB
// of workflow, SubmitTimeoutMs); WatchRun has none. A call that could
// not reach the coordinator fails UNAVAILABLE (or DEADLINE_EXCEEDED) with "cannot reach the
// coordinator at ADDR: ..." and is marked (IsCoordinatorUnreachable); other errors carry the
// coordinator's own code and message. With a token, every call sends
// "authorization: Bearer TOKEN". Thread-compatible.
//
// Message sizes are capped on purpose (docs/security.md, "Limits"): an answer over
// kMaxReceiveBytes or a request over kMaxSendBytes fails RESOURCE_EXHAUSTED with a message
// that names both sides' limits.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "cli/coordinator.h"
#include "longhaul/v1/client.grpc.pb.h"

namespace longhaul::cli {

// The largest answer the CLI accepts: every answer is bounded by paging (a page of stages is
// about 1 MiB at most), so this is headroom, not a target.
inline constexpr int kMaxReceiveBytes = 16 << 20;
// The largest request it sends: a workflow file and its submission, under longhauld's own
// receive limit (daemon/server/coordinator.h, kMaxGrpcReceiveBytes).
inline constexpr int kMaxSendBytes = 64 << 20;

struct GrpcCoordinatorOptions {
  std::string address;     // HOST:PORT
  std::string token;       // empty: none
  std::string tls_ca_pem;  // empty: plaintext
  int64_t rpc_timeout_ms = 30'000;
};

// The deadline of a SubmitRun carrying `workflow_bytes` of workflow text.
int64_t SubmitTimeoutMs(int64_t rpc_timeout_ms, size_t workflow_bytes);

class GrpcCoordinator : public Coordinator {
 public:
  explicit GrpcCoordinator(GrpcCoordinatorOptions options);

  Result<v1::SubmitRunResponse> SubmitRun(const v1::SubmitRunRequest& req) override;
  Result<v1::SubmitRunResponse> PivotRun(const v1::PivotRunRequest& req) override;
  Result<v1::Run> GetRun(const v1::GetRunRequest& req) override;
  Result<v1::ListStagesResponse> ListStages(const v1::ListStagesRequest& req) override;
  Result<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& req) override;
  Result<v1::Run> CancelRun(const v1::CancelRunRequest& req) override;
  Result<v1::Run> RetryStage(const v1::RetryStageRequest& req) override;
  Result<v1::ListAgentsResponse> ListAgents() override;
  Result<v1::ListAuditResponse> ListAudit(const v1::ListAuditRequest& req) override;
  Result<v1::GcResponse> CollectGarbage(const v1::GcRequest& req) override;
  Result<v1::ListNotificationsResponse> ListNotifications(
      const v1::ListNotificationsRequest& req) override;
  Result<v1::TestNotifyResponse> TestNotify(const v1::TestNotifyRequest& req) override;
  // Waits up to an hour: the copy and its integrity_check grow with the database.
  Result<v1::BackupResponse> Backup(const v1::BackupRequest& req) override;
  Result<v1::DrainGpuResponse> DrainGpu(const v1::DrainGpuRequest& req) override;
  Result<v1::DrainAgentResponse> DrainAgent(const v1::DrainAgentRequest& req) override;
  Result<v1::Run> SetRunBudget(const v1::SetRunBudgetRequest& req) override;
  Result<v1::Run> SetRunPriority(const v1::SetRunPriorityRequest& req) override;
  Result<v1::Tag> SetTag(const v1::SetTagRequest& req) override;
  Result<v1::Tag> RemoveTag(const v1::RemoveTagRequest& req) override;
  Result<v1::ListTagsResponse> ListTags(const v1::ListTagsRequest& req) override;
  Result<v1::ScopeBudget> SetBudget(const v1::SetBudgetRequest& req) override;
  Result<v1::ListBudgetsResponse> ListBudgets(const v1::ListBudgetsRequest& req) override;
  Result<v1::Reservation> Reserve(const v1::ReserveRequest& req) override;
  Result<v1::Reservation> Unreserve(const v1::UnreserveRequest& req) override;
  Result<v1::ListReservationsResponse> ListReservations(
      const v1::ListReservationsRequest& req) override;
  Result<v1::ScopeBudget> RemoveBudget(const v1::RemoveBudgetRequest& req) override;
  Result<v1::Quota> SetQuota(const v1::SetQuotaRequest& req) override;
  Result<v1::Quota> RemoveQuota(const v1::RemoveQuotaRequest& req) override;
  Result<v1::ListQuotasResponse> ListQuotas(const v1::ListQuotasRequest& req) override;
  Result<v1::ListMetricsResponse> ListMetrics(const v1::ListMetricsRequest& req) override;
  Result<v1::GetSweepResponse> GetSweep(const v1::GetSweepRequest& req) override;
  Result<v1::GetLineageResponse> GetLineage(const v1::GetLineageRequest& req) override;
  Result<v1::ReadLogResponse> ReadLog(const v1::ReadLogRequest& req) override;
  Status WatchRun(int64_t run_id,
                  const std::function<void(const v1::RunUpdate&)>& on_update) override;
  std::string address() const override { return options_.address; }

 private:
  // Runs one unary call with a deadline; `call(ctx, resp)` returns the grpc::Status.
  // `timeout_ms` 0: rpc_timeout_ms.
  template <typename Response, typename Call>
  Result<Response> Unary(Call call, int64_t timeout_ms = 0);
  // No deadline when `timeout_ms` is 0.
  void Prepare(grpc::ClientContext& ctx, int64_t timeout_ms) const;
  Status Convert(const grpc::Status& status, int64_t timeout_ms) const;

  GrpcCoordinatorOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::LonghaulService::Stub> stub_;
};

}  // namespace longhaul::cli

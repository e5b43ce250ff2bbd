// The coordinator as the CLI sees it: one method per LonghaulService call, each returning
// the project's Status. GrpcCoordinator is the real one; tests may use a fake.
#pragma once

#include <functional>
#include <string>

#include "core/status.h"
#include "longhaul/v1/client.pb.h"

namespace longhaul::cli {

class Coordinator {
 public:
  virtual ~Coordinator() = default;

  virtual Result<v1::SubmitRunResponse> SubmitRun(const v1::SubmitRunRequest& req) = 0;
  virtual Result<v1::SubmitRunResponse> PivotRun(const v1::PivotRunRequest& req) {
    return absl::UnimplementedError("pivot is not supported by this coordinator");
  }
  virtual Result<v1::Run> GetRun(const v1::GetRunRequest& req) = 0;
  // One page of a run's stages (a coordinator without paging: Unimplemented).
  virtual Result<v1::ListStagesResponse> ListStages(const v1::ListStagesRequest& req) {
    return absl::UnimplementedError("paging stages is not supported by this coordinator");
  }
  virtual Result<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& req) = 0;
  virtual Result<v1::Run> CancelRun(const v1::CancelRunRequest& req) = 0;
  virtual Result<v1::Run> RetryStage(const v1::RetryStageRequest& req) = 0;
  virtual Result<v1::ListAgentsResponse> ListAgents() = 0;
  virtual Result<v1::ListAuditResponse> ListAudit(const v1::ListAuditRequest& req) {
    return absl::UnimplementedError("the audit trail is not supported by this coordinator");
  }
  virtual Result<v1::GcResponse> CollectGarbage(const v1::GcRequest& req) {
    return absl::UnimplementedError("retention is not supported by this coordinator");
  }
  virtual Result<v1::ListNotificationsResponse> ListNotifications(
      const v1::ListNotificationsRequest& req) {
    return absl::UnimplementedError("notifications are not supported by this coordinator");
  }
  virtual Result<v1::TestNotifyResponse> TestNotify(const v1::TestNotifyRequest& req) {
    return absl::UnimplementedError("notifications are not supported by this coordinator");
  }
  virtual Result<v1::BackupResponse> Backup(const v1::BackupRequest& req) {
    return absl::UnimplementedError("backup is not supported by this coordinator");
  }
  virtual Result<v1::DrainGpuResponse> DrainGpu(const v1::DrainGpuRequest& req) {
    return absl::UnimplementedError("GPU drains are not supported by this coordinator");
  }
  virtual Result<v1::DrainAgentResponse> DrainAgent(const v1::DrainAgentRequest& req) {
    return absl::UnimplementedError("agent drains are not supported by this coordinator");
  }
  virtual Result<v1::Run> SetRunBudget(const v1::SetRunBudgetRequest& req) {
    return absl::UnimplementedError("run budgets are not supported by this coordinator");
  }
  virtual Result<v1::Run> SetRunPriority(const v1::SetRunPriorityRequest& req) {
    return absl::UnimplementedError("changing a run's class is not supported by this coordinator");
  }
  virtual Result<v1::Tag> SetTag(const v1::SetTagRequest& req) {
    return absl::UnimplementedError("tags are not supported by this coordinator");
  }
  virtual Result<v1::Tag> RemoveTag(const v1::RemoveTagRequest& req) {
    return absl::UnimplementedError("tags are not supported by this coordinator");
  }
  virtual Result<v1::ListTagsResponse> ListTags(const v1::ListTagsRequest& req) {
    return absl::UnimplementedError("tags are not supported by this coordinator");
  }
  virtual Result<v1::ScopeBudget> SetBudget(const v1::SetBudgetRequest& req) {
    return absl::UnimplementedError(
        "team and workflow budgets are not supported by this coordinator");
  }
  virtual Result<v1::ListBudgetsResponse> ListBudgets(const v1::ListBudgetsRequest& req) {
    return absl::UnimplementedError(
        "team and workflow budgets are not supported by this coordinator");
  }
  virtual Result<v1::Reservation> Reserve(const v1::ReserveRequest& req) {
    return absl::UnimplementedError("reservations are not supported by this coordinator");
  }
  virtual Result<v1::Reservation> Unreserve(const v1::UnreserveRequest& req) {
    return absl::UnimplementedError("reservations are not supported by this coordinator");
  }
  virtual Result<v1::ListReservationsResponse> ListReservations(
      const v1::ListReservationsRequest& req) {
    return absl::UnimplementedError("reservations are not supported by this coordinator");
  }
  virtual Result<v1::ScopeBudget> RemoveBudget(const v1::RemoveBudgetRequest& req) {
    return absl::UnimplementedError(
        "team and workflow budgets are not supported by this coordinator");
  }
  virtual Result<v1::Quota> SetQuota(const v1::SetQuotaRequest& req) {
    return absl::UnimplementedError("quotas at run time are not supported by this coordinator");
  }
  virtual Result<v1::Quota> RemoveQuota(const v1::RemoveQuotaRequest& req) {
    return absl::UnimplementedError("quotas at run time are not supported by this coordinator");
  }
  virtual Result<v1::ListQuotasResponse> ListQuotas(const v1::ListQuotasRequest& req) {
    return absl::UnimplementedError("quotas at run time are not supported by this coordinator");
  }
  virtual Result<v1::ListMetricsResponse> ListMetrics(const v1::ListMetricsRequest& req) {
    return absl::UnimplementedError("metric histories are not supported by this coordinator");
  }
  virtual Result<v1::GetSweepResponse> GetSweep(const v1::GetSweepRequest& req) {
    return absl::UnimplementedError("sweeps are not supported by this coordinator");
  }
  virtual Result<v1::GetLineageResponse> GetLineage(const v1::GetLineageRequest& req) {
    return absl::UnimplementedError("lineage is not supported by this coordinator");
  }
  virtual Result<v1::ReadLogResponse> ReadLog(const v1::ReadLogRequest& req) = 0;
  // Calls `on_update` for each update, in order, until the stream ends: OK when the
  // coordinator closed it (after the update that made the run terminal), else the error.
  virtual Status WatchRun(int64_t run_id,
                          const std::function<void(const v1::RunUpdate&)>& on_update) = 0;

  // "HOST:PORT", for messages.
  virtual std::string address() const = 0;
};

// True when `status` says the coordinator itself could not be reached (no connection), as
// opposed to an UNAVAILABLE answer from a coordinator that was reached (e.g. the agent that
// holds a log is away).
bool IsCoordinatorUnreachable(const Status& status);
// Marks `status` as "the coordinator could not be reached".
Status MarkCoordinatorUnreachable(Status status);

}  // namespace longhaul::cli

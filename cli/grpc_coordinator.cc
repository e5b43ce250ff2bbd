#include "cli/grpc_coordinator.h"

#include <chrono>

#include "absl/strings/cord.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

constexpr char kUnreachablePayload[] = "type.longhaul.dev/coordinator-unreachable";
// What a pivot's deadline is sized for: a workflow of 8 MiB (about 130,000 stages).
constexpr size_t kMaxPivotWorkflowBytes = 8 << 20;

}  // namespace

bool IsCoordinatorUnreachable(const Status& status) {
  return status.GetPayload(kUnreachablePayload).has_value();
}

Status MarkCoordinatorUnreachable(Status status) {
  status.SetPayload(kUnreachablePayload, absl::Cord("1"));
  return status;
}

namespace {

grpc::ChannelArguments ChannelLimits() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  args.SetMaxSendMessageSize(kMaxSendBytes);
  return args;
}

}  // namespace

GrpcCoordinator::GrpcCoordinator(GrpcCoordinatorOptions options)
    : options_(std::move(options)),
      channel_(grpc::CreateCustomChannel(
          options_.address,
          options_.tls_ca_pem.empty()
              ? grpc::InsecureChannelCredentials()
              : grpc::SslCredentials(grpc::SslCredentialsOptions{options_.tls_ca_pem, "", ""}),
          ChannelLimits())),
      stub_(v1::LonghaulService::NewStub(channel_)) {}

void GrpcCoordinator::Prepare(grpc::ClientContext& ctx, int64_t timeout_ms) const {
  if (timeout_ms > 0) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  }
  if (!options_.token.empty()) ctx.AddMetadata("authorization", "Bearer " + options_.token);
}

Status GrpcCoordinator::Convert(const grpc::Status& s, int64_t timeout_ms) const {
  if (s.ok()) return OkStatus();
  auto code = static_cast<absl::StatusCode>(s.error_code());
  // An UNAVAILABLE answer from a coordinator that was reached leaves the connection up
  // (READY); a failure to connect, or a connection that broke, does not.
  bool no_connection =
      (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded) &&
      channel_->GetState(/*try_to_connect=*/false) != GRPC_CHANNEL_READY;
  if (no_connection) {
    return MarkCoordinatorUnreachable(absl::Status(
        code,
        StrCat("cannot reach the coordinator at ", options_.address, ": ", s.error_message())));
  }
  if (code == absl::StatusCode::kResourceExhausted &&
      s.error_message().find("message larger than max") != std::string::npos) {
    return absl::ResourceExhaustedError(StrCat(
        "a message to or from the coordinator at ", options_.address, " is over a size limit (",
        s.error_message(), "); this client accepts answers up to ", kMaxReceiveBytes >> 20,
        " MiB and sends requests up to ", kMaxSendBytes >> 20,
        " MiB (docs/security.md, \"Limits\"); a coordinator that answers more is older than "
        "this client: a run's stages come a page at a time"));
  }
  if (code == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(StrCat("the coordinator at ", options_.address,
                                              " did not answer within ", timeout_ms / 1000, "s"));
  }
  return absl::Status(code, s.error_message());
}

template <typename Response, typename Call>
Result<Response> GrpcCoordinator::Unary(Call call, int64_t timeout_ms) {
  if (timeout_ms <= 0) timeout_ms = options_.rpc_timeout_ms;
  grpc::ClientContext ctx;
  Prepare(ctx, timeout_ms);
  Response resp;
  grpc::Status s = call(&ctx, &resp);
  if (!s.ok()) return Convert(s, timeout_ms);
  return resp;
}

int64_t SubmitTimeoutMs(int64_t rpc_timeout_ms, size_t workflow_bytes) {
  // Parsing, planning and storing take about 1 s per 100,000 stages (6 MiB) on a quiet
  // machine; 10 s per MiB leaves room for a busy one.
  return rpc_timeout_ms + static_cast<int64_t>(workflow_bytes / 1024) * 10'000 / 1024;
}

Result<v1::SubmitRunResponse> GrpcCoordinator::PivotRun(const v1::PivotRunRequest& req) {
  // The earlier run's workflow may be big and only the coordinator knows its size.
  return Unary<v1::SubmitRunResponse>(
      [&](auto* ctx, auto* resp) { return stub_->PivotRun(ctx, req, resp); },
      SubmitTimeoutMs(options_.rpc_timeout_ms, kMaxPivotWorkflowBytes));
}

Result<v1::SubmitRunResponse> GrpcCoordinator::SubmitRun(const v1::SubmitRunRequest& req) {
  return Unary<v1::SubmitRunResponse>(
      [&](auto* ctx, auto* resp) { return stub_->SubmitRun(ctx, req, resp); },
      SubmitTimeoutMs(options_.rpc_timeout_ms, req.workflow_text().size()));
}

Result<v1::Run> GrpcCoordinator::GetRun(const v1::GetRunRequest& req) {
  return Unary<v1::Run>([&](auto* ctx, auto* resp) { return stub_->GetRun(ctx, req, resp); });
}

Result<v1::ListStagesResponse> GrpcCoordinator::ListStages(const v1::ListStagesRequest& req) {
  return Unary<v1::ListStagesResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListStages(ctx, req, resp); });
}

Result<v1::ListRunsResponse> GrpcCoordinator::ListRuns(const v1::ListRunsRequest& req) {
  return Unary<v1::ListRunsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListRuns(ctx, req, resp); });
}

Result<v1::Run> GrpcCoordinator::CancelRun(const v1::CancelRunRequest& req) {
  return Unary<v1::Run>([&](auto* ctx, auto* resp) { return stub_->CancelRun(ctx, req, resp); });
}

Result<v1::Run> GrpcCoordinator::RetryStage(const v1::RetryStageRequest& req) {
  return Unary<v1::Run>([&](auto* ctx, auto* resp) { return stub_->RetryStage(ctx, req, resp); });
}

Result<v1::ListAgentsResponse> GrpcCoordinator::ListAgents() {
  return Unary<v1::ListAgentsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListAgents(ctx, v1::ListAgentsRequest(), resp); });
}

Result<v1::Run> GrpcCoordinator::SetRunBudget(const v1::SetRunBudgetRequest& req) {
  return Unary<v1::Run>([&](auto* ctx, auto* resp) { return stub_->SetRunBudget(ctx, req, resp); });
}

Result<v1::Run> GrpcCoordinator::SetRunPriority(const v1::SetRunPriorityRequest& req) {
  return Unary<v1::Run>(
      [&](auto* ctx, auto* resp) { return stub_->SetRunPriority(ctx, req, resp); });
}

Result<v1::DrainAgentResponse> GrpcCoordinator::DrainAgent(const v1::DrainAgentRequest& req) {
  return Unary<v1::DrainAgentResponse>(
      [&](auto* ctx, auto* resp) { return stub_->DrainAgent(ctx, req, resp); });
}

Result<v1::ScopeBudget> GrpcCoordinator::SetBudget(const v1::SetBudgetRequest& req) {
  return Unary<v1::ScopeBudget>(
      [&](auto* ctx, auto* resp) { return stub_->SetBudget(ctx, req, resp); });
}

Result<v1::Reservation> GrpcCoordinator::Reserve(const v1::ReserveRequest& req) {
  return Unary<v1::Reservation>(
      [&](auto* ctx, auto* resp) { return stub_->Reserve(ctx, req, resp); });
}

Result<v1::Reservation> GrpcCoordinator::Unreserve(const v1::UnreserveRequest& req) {
  return Unary<v1::Reservation>(
      [&](auto* ctx, auto* resp) { return stub_->Unreserve(ctx, req, resp); });
}

Result<v1::ListReservationsResponse> GrpcCoordinator::ListReservations(
    const v1::ListReservationsRequest& req) {
  return Unary<v1::ListReservationsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListReservations(ctx, req, resp); });
}

Result<v1::ListBudgetsResponse> GrpcCoordinator::ListBudgets(const v1::ListBudgetsRequest& req) {
  return Unary<v1::ListBudgetsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListBudgets(ctx, req, resp); });
}

Result<v1::ScopeBudget> GrpcCoordinator::RemoveBudget(const v1::RemoveBudgetRequest& req) {
  return Unary<v1::ScopeBudget>(
      [&](auto* ctx, auto* resp) { return stub_->RemoveBudget(ctx, req, resp); });
}

Result<v1::Quota> GrpcCoordinator::SetQuota(const v1::SetQuotaRequest& req) {
  return Unary<v1::Quota>([&](auto* ctx, auto* resp) { return stub_->SetQuota(ctx, req, resp); });
}

Result<v1::Quota> GrpcCoordinator::RemoveQuota(const v1::RemoveQuotaRequest& req) {
  return Unary<v1::Quota>(
      [&](auto* ctx, auto* resp) { return stub_->RemoveQuota(ctx, req, resp); });
}

Result<v1::ListQuotasResponse> GrpcCoordinator::ListQuotas(const v1::ListQuotasRequest& req) {
  return Unary<v1::ListQuotasResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListQuotas(ctx, req, resp); });
}

Result<v1::DrainGpuResponse> GrpcCoordinator::DrainGpu(const v1::DrainGpuRequest& req) {
  return Unary<v1::DrainGpuResponse>(
      [&](auto* ctx, auto* resp) { return stub_->DrainGpu(ctx, req, resp); });
}

Result<v1::BackupResponse> GrpcCoordinator::Backup(const v1::BackupRequest& req) {
  return Unary<v1::BackupResponse>(
      [&](auto* ctx, auto* resp) { return stub_->Backup(ctx, req, resp); }, 3'600'000);
}

Result<v1::Tag> GrpcCoordinator::SetTag(const v1::SetTagRequest& req) {
  return Unary<v1::Tag>([&](auto* ctx, auto* resp) { return stub_->SetTag(ctx, req, resp); });
}

Result<v1::Tag> GrpcCoordinator::RemoveTag(const v1::RemoveTagRequest& req) {
  return Unary<v1::Tag>([&](auto* ctx, auto* resp) { return stub_->RemoveTag(ctx, req, resp); });
}

Result<v1::ListTagsResponse> GrpcCoordinator::ListTags(const v1::ListTagsRequest& req) {
  return Unary<v1::ListTagsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListTags(ctx, req, resp); });
}

Result<v1::ListAuditResponse> GrpcCoordinator::ListAudit(const v1::ListAuditRequest& req) {
  return Unary<v1::ListAuditResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListAudit(ctx, req, resp); });
}

Result<v1::ListMetricsResponse> GrpcCoordinator::ListMetrics(const v1::ListMetricsRequest& req) {
  return Unary<v1::ListMetricsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListMetrics(ctx, req, resp); });
}

Result<v1::GetSweepResponse> GrpcCoordinator::GetSweep(const v1::GetSweepRequest& req) {
  return Unary<v1::GetSweepResponse>(
      [&](auto* ctx, auto* resp) { return stub_->GetSweep(ctx, req, resp); });
}

Result<v1::GetLineageResponse> GrpcCoordinator::GetLineage(const v1::GetLineageRequest& req) {
  return Unary<v1::GetLineageResponse>(
      [&](auto* ctx, auto* resp) { return stub_->GetLineage(ctx, req, resp); });
}

Result<v1::GcResponse> GrpcCoordinator::CollectGarbage(const v1::GcRequest& req) {
  // Removing big output dirs takes what the agents' file systems take.
  return Unary<v1::GcResponse>(
      [&](auto* ctx, auto* resp) { return stub_->CollectGarbage(ctx, req, resp); },
      std::max<int64_t>(options_.rpc_timeout_ms, 30 * 60'000));
}

Result<v1::ListNotificationsResponse> GrpcCoordinator::ListNotifications(
    const v1::ListNotificationsRequest& req) {
  return Unary<v1::ListNotificationsResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ListNotifications(ctx, req, resp); });
}

Result<v1::TestNotifyResponse> GrpcCoordinator::TestNotify(const v1::TestNotifyRequest& req) {
  return Unary<v1::TestNotifyResponse>(
      [&](auto* ctx, auto* resp) { return stub_->TestNotify(ctx, req, resp); });
}

Result<v1::ReadLogResponse> GrpcCoordinator::ReadLog(const v1::ReadLogRequest& req) {
  return Unary<v1::ReadLogResponse>(
      [&](auto* ctx, auto* resp) { return stub_->ReadLog(ctx, req, resp); });
}

Status GrpcCoordinator::WatchRun(int64_t run_id,
                                 const std::function<void(const v1::RunUpdate&)>& on_update) {
  grpc::ClientContext ctx;
  Prepare(ctx, /*timeout_ms=*/0);
  v1::WatchRunRequest req;
  req.set_id(run_id);
  std::unique_ptr<grpc::ClientReader<v1::RunUpdate>> reader = stub_->WatchRun(&ctx, req);
  v1::RunUpdate update;
  while (reader->Read(&update)) on_update(update);
  return Convert(reader->Finish(), options_.rpc_timeout_ms);
}

}  // namespace longhaul::cli

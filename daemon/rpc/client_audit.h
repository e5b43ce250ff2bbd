// What the audit trail says about one mutation of the client API: its target ("run 12",
// "run 12 stage datagen") and the rest of what the call asked (params, dry run, the workflow
// file), from the request and, where the call created a run, the response.
#pragma once

#include <string>

#include "longhaul/v1/client.pb.h"

namespace longhaul::rpc {

struct AuditSubject {
  std::string target;
  std::string detail;  // at most about 2 KiB: long values are cut with "..."
};

AuditSubject DescribeForAudit(const v1::SubmitRunRequest& req, const v1::SubmitRunResponse& resp);
AuditSubject DescribeForAudit(const v1::PivotRunRequest& req, const v1::SubmitRunResponse& resp);
AuditSubject DescribeForAudit(const v1::CancelRunRequest& req, const v1::Run& resp);
AuditSubject DescribeForAudit(const v1::RetryStageRequest& req, const v1::Run& resp);
AuditSubject DescribeForAudit(const v1::GcRequest& req, const v1::GcResponse& resp);
AuditSubject DescribeForAudit(const v1::TestNotifyRequest& req, const v1::TestNotifyResponse& resp);
AuditSubject DescribeForAudit(const v1::BackupRequest& req, const v1::BackupResponse& resp);
AuditSubject DescribeForAudit(const v1::DrainGpuRequest& req, const v1::DrainGpuResponse& resp);
AuditSubject DescribeForAudit(const v1::SetRunBudgetRequest& req, const v1::Run& resp);
AuditSubject DescribeForAudit(const v1::SetRunPriorityRequest& req, const v1::Run& resp);
AuditSubject DescribeForAudit(const v1::DrainAgentRequest& req, const v1::DrainAgentResponse& resp);
// "tag best-drafter", "run 45 train (moved from run 41 train)": a move keeps its history here.
AuditSubject DescribeForAudit(const v1::SetTagRequest& req, const v1::Tag& resp);
AuditSubject DescribeForAudit(const v1::RemoveTagRequest& req, const v1::Tag& resp);
AuditSubject DescribeForAudit(const v1::SetBudgetRequest& req, const v1::ScopeBudget& resp);
AuditSubject DescribeForAudit(const v1::ReserveRequest& req, const v1::Reservation& resp);
AuditSubject DescribeForAudit(const v1::UnreserveRequest& req, const v1::Reservation& resp);
AuditSubject DescribeForAudit(const v1::RemoveBudgetRequest& req, const v1::ScopeBudget& resp);
// "team vision", "quota gpus:4,borrow:8 (was gpus:2, from --quota)".
AuditSubject DescribeForAudit(const v1::SetQuotaRequest& req, const v1::Quota& resp);
AuditSubject DescribeForAudit(const v1::RemoveQuotaRequest& req, const v1::Quota& resp);

}  // namespace longhaul::rpc

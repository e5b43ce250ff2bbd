// Changing a run's priority class after submission (docs/scheduling.md, "Changing a run's
// class"): the caller's right to the new class, then the scheduler's move of its waiting
// stages.
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/workflow/run_policy.h"

namespace longhaul::rpc {

Result<v1::Run> ClientApi::SetRunPriority(const v1::SetRunPriorityRequest& req) {
  RETURN_IF_ERROR(workflow::CheckPriorityClass(req.priority(), "priority"));
  // The rules of a submission with `--priority CLASS`; an admin may set any class, whatever
  // --priority-allow says.
  if (req.submitter().role() != auth::RoleName(auth::Role::kAdmin)) {
    RETURN_IF_ERROR(priority_.Resolve(req.priority(), "", req.submitter()).status());
  }
  return loop_->Call<v1::Run>(
      [this, req] { return scheduler_->SetRunPriority(req.run_id(), req.priority()); });
}

}  // namespace longhaul::rpc

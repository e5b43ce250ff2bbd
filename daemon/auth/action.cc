#include "daemon/auth/action.h"

namespace longhaul::auth {
namespace {

struct ActionInfo {
  std::string_view method;
  std::string_view phrase;
  Role role;
  bool mutation;
};

ActionInfo Info(Action action) {
  switch (action) {
    case Action::kGetRun:
      return {"GetRun", "read runs", Role::kViewer, false};
    case Action::kListRuns:
      return {"ListRuns", "list runs", Role::kViewer, false};
    case Action::kWatchRun:
      return {"WatchRun", "watch runs", Role::kViewer, false};
    case Action::kListEvents:
      return {"ListEvents", "read events", Role::kViewer, false};
    case Action::kReadLog:
      return {"ReadLog", "read logs", Role::kViewer, false};
    case Action::kListAgents:
      return {"ListAgents", "list agents", Role::kViewer, false};
    case Action::kListAttempts:
      return {"ListAttempts", "list attempts", Role::kViewer, false};
    case Action::kListMetrics:
      return {"ListMetrics", "read metrics", Role::kViewer, false};
    case Action::kListNotifications:
      return {"ListNotifications", "list notifications", Role::kViewer, false};
    case Action::kListTags:
      return {"ListTags", "list tags", Role::kViewer, false};
    case Action::kSetTag:
      return {"SetTag", "tag stage results", Role::kOperator, true};
    case Action::kRemoveTag:
      return {"RemoveTag", "remove tags", Role::kOperator, true};
    case Action::kListBudgets:
      return {"ListBudgets", "list budgets", Role::kViewer, false};
    case Action::kListReservations:
      return {"ListReservations", "list reservations", Role::kViewer, false};
    case Action::kListQuotas:
      return {"ListQuotas", "list quotas", Role::kViewer, false};
    case Action::kSubmitRun:
      return {"SubmitRun", "submit runs", Role::kOperator, true};
    case Action::kPivotRun:
      return {"PivotRun", "pivot runs", Role::kOperator, true};
    case Action::kRetryStage:
      return {"RetryStage", "retry stages", Role::kOperator, true};
    case Action::kCancelRun:
      return {"CancelRun", "cancel runs", Role::kOperator, true};
    case Action::kListAudit:
      return {"ListAudit", "read the audit trail", Role::kAdmin, false};
    case Action::kCollectGarbage:
      return {"CollectGarbage", "collect old runs", Role::kAdmin, true};
    case Action::kTestNotify:
      return {"TestNotify", "send test notifications", Role::kAdmin, true};
    case Action::kBackup:
      return {"Backup", "back up the database", Role::kAdmin, true};
    case Action::kDrainGpu:
      return {"DrainGpu", "drain GPUs", Role::kAdmin, true};
    case Action::kDrainAgent:
      return {"DrainAgent", "drain agents", Role::kAdmin, true};
    case Action::kSetRunBudget:
      return {"SetRunBudget", "set run budgets", Role::kAdmin, true};
    case Action::kSetRunPriority:
      return {"SetRunPriority", "change run classes", Role::kOperator, true};
    case Action::kSetBudget:
      return {"SetBudget", "set team and workflow budgets", Role::kAdmin, true};
    case Action::kReserve:
      return {"Reserve", "reserve GPUs", Role::kAdmin, true};
    case Action::kUnreserve:
      return {"Unreserve", "cancel reservations", Role::kAdmin, true};
    case Action::kRemoveBudget:
      return {"RemoveBudget", "remove team and workflow budgets", Role::kAdmin, true};
    case Action::kSetQuota:
      return {"SetQuota", "set team quotas", Role::kAdmin, true};
    case Action::kRemoveQuota:
      return {"RemoveQuota", "remove team quotas", Role::kAdmin, true};
  }
  return {"Unknown", "do this", Role::kAdmin, true};
}

}  // namespace

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer:
      return "viewer";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kViewer, Role::kOperator, Role::kAdmin}) {
    if (RoleName(r) == name) return r;
  }
  return std::nullopt;
}

std::string_view ActionName(Action action) { return Info(action).phrase; }
std::string_view ActionMethod(Action action) { return Info(action).method; }
Role RequiredRole(Action action) { return Info(action).role; }
bool IsMutation(Action action) { return Info(action).mutation; }

}  // namespace longhaul::auth

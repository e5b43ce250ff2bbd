// Roles and the actions of the client API, one action per RPC (and per HTTP endpoint that
// calls the same code). Each action needs a least role; roles are ordered, so an operator may
// do whatever a viewer may, and an admin whatever an operator may.
#pragma once

#include <optional>
#include <string_view>

namespace longhaul::auth {

enum class Role { kViewer = 1, kOperator = 2, kAdmin = 3 };

enum class Action {
  // Reads (viewer).
  kGetRun,
  kListRuns,
  kWatchRun,
  kListEvents,
  kReadLog,
  kListAgents,
  kListAttempts,
  kListMetrics,
  kListNotifications,
  kListTags,
  kListBudgets,  // the GPU-hour budgets of teams and workflows, and their use
  kListReservations,  // agents' GPUs reserved for users and teams
  kListQuotas,   // the GPU quotas of teams and users, and their use
  // Mutations of runs (operator). Dry runs are mutations too: they plan with the caller's input.
  kSubmitRun,
  kPivotRun,
  kRetryStage,
  kCancelRun,
  kSetTag,     // names a stage's result, or moves the name (docs/workflow-format.md, "Tags")
  kRemoveTag,
  // Administration (admin): the audit trail, a backup of the database, GPUs taken out of
  // service and brought back by hand.
  kListAudit,
  kCollectGarbage,  // retention: removes ended runs' logs, outputs and events
  // Sends a sample notification from longhauld (admin): it reaches out to other hosts.
  kTestNotify,
  kBackup,
  kDrainGpu,
  kSetRunBudget,  // raises (or lowers) a run's GPU-hour budget
  // Changes a run's priority class (operator; the class itself is checked against
  // --priority-allow, as at submission).
  kSetRunPriority,
  kDrainAgent,    // a maintenance window on an agent, or its removal
  kSetBudget,     // sets a team's or a workflow name's GPU-hour budget
  kReserve,       // holds an agent's GPUs for a user or team for a window
  kUnreserve,     // cancels such a reservation
  kRemoveBudget,  // removes one
  kSetQuota,      // sets a team's GPU quota at run time
  kRemoveQuota,   // removes a team's GPU quota, --quota's too
};

// "viewer", "operator", "admin".
std::string_view RoleName(Role role);
// The role named `name`, or nullopt.
std::optional<Role> ParseRole(std::string_view name);

// A short verb phrase for messages and the audit trail: "submit runs", "list runs", ...
std::string_view ActionName(Action action);
// The method name, as the audit trail records it: "SubmitRun", "ListRuns", ...
std::string_view ActionMethod(Action action);
Role RequiredRole(Action action);
// True for the actions that change state (recorded in the audit trail).
bool IsMutation(Action action);

}  // namespace longhaul::auth

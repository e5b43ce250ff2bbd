// ClientApi: everything a client can ask of longhauld, as plain functions returning
// Status/Result. The gRPC service (client_service.h) and the HTTP API (daemon/http) both call
// these, so neither carries a rule of its own. Reads go straight to the store's read
// connections; anything that changes state runs on the scheduler loop and answers once it is
// committed. Thread-safe: call from any thread but the scheduler loop's.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "core/memory_policy.h"
#include "core/status.h"
#include "daemon/auth/authorizer.h"
#include "daemon/metrics/metrics.h"
#include "daemon/notify/sink.h"
#include "daemon/rpc/client_audit.h"
#include "daemon/rpc/submission_ledger.h"
#include "daemon/scheduler/loop.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/scheduler/watcher.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/workflow.h"
#include "longhaul/v1/client.pb.h"

namespace longhaul::rpc {

// What the client API knows of notifications (docs/operations.md, "Notifications").
struct ClientNotifyConfig {
  notify::Deliverer* deliverer = nullptr;  // not owned; null: TestNotify is unavailable
  workflow::NotifySpec daemon_spec;        // longhauld's own sinks (--notify-*)
  std::string ui_base;                     // for the sample's link
  // A command sink runs on longhauld's host as its user: a workflow's `notify.command` and
  // TestNotify's command are refused unless longhauld allows them (--notify-allow-commands).
  bool allow_commands = false;
};

// A tag use as the client API answers it (client_tags.cc).
v1::TagUse TagUseRowToProto(const store::TagUseRow& u);

// The submitter a transport stamps on SubmitRun and PivotRun from its check of the caller.
v1::Submitter SubmitterOf(const auth::Principal& who);

class ClientApi {
 public:
  // `clock` (for the audit trail's times) is not owned and outlives this object.
  ClientApi(scheduler::Scheduler* scheduler, scheduler::SchedulerLoop* loop,
            store::SqliteStore* store, int64_t log_timeout_ms, const Clock* clock)
      : scheduler_(scheduler),
        loop_(loop),
        store_(store),
        log_timeout_ms_(log_timeout_ms),
        clock_(clock) {}

  // Parses, validates, plans and (unless a dry run) stores and starts a run. The response
  // holds the run's summary (no stages), the plan in numbers and one page of its entries
  // (req.plan_page). With a submission_id, a repeated call answers with the run the first
  // made (SubmissionLedger).
  Result<v1::SubmitRunResponse> SubmitRun(const v1::SubmitRunRequest& req);
  // An earlier run's workflow again with changed params; reuses what did not change. Answers
  // as SubmitRun.
  Result<v1::SubmitRunResponse> PivotRun(const v1::PivotRunRequest& req);
  // The run with its stage counts and at most one page of stages (GetRunRequest.stage_limit).
  Result<v1::Run> GetRun(const v1::GetRunRequest& req);
  // One page of a run's stages.
  Result<v1::ListStagesResponse> ListStages(const v1::ListStagesRequest& req);
  Result<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& req);
  // CancelRun and RetryStage answer the run as it is after the change, like GetRun: stage
  // counts and at most one page of stages.
  Result<v1::Run> CancelRun(const v1::CancelRunRequest& req);
  Result<v1::Run> RetryStage(const v1::RetryStageRequest& req);
  Result<v1::ListAgentsResponse> ListAgents();
  // Drains or undrains GPUs (Scheduler::SetGpuService), `req.by` naming the caller.
  Result<v1::DrainGpuResponse> DrainGpu(const v1::DrainGpuRequest& req);
  // Sets or removes an agent's maintenance window (Scheduler::SetAgentDrain), `req.by` naming
  // the caller.
  Result<v1::DrainAgentResponse> DrainAgent(const v1::DrainAgentRequest& req);
  // Asks the agent that ran the attempt for at most ClampLogReadBytes(max_bytes) bytes
  // (core/log_read.h). InvalidArgument for a stream other than stdout/stderr or a stage name
  // no workflow could have; DeadlineExceeded when the agent does not answer in time,
  // Unavailable when it is not connected.
  Result<v1::ReadLogResponse> ReadLog(const v1::ReadLogRequest& req);
  Result<v1::ListEventsResponse> ListEvents(const v1::ListEventsRequest& req);
  // Every attempt of one stage, oldest first. NotFound for an unknown run or stage.
  Result<v1::ListAttemptsResponse> ListAttempts(const v1::ListAttemptsRequest& req);
  // One page of a stage's metric points (every name), in the order they were stored.
  Result<v1::ListMetricsResponse> ListMetrics(const v1::ListMetricsRequest& req);
  // A stage's GPU telemetry: per attempt and GPU its points and summary, oldest attempt
  // first, and the stage's summary over all of them; no series (and an empty summary) when
  // the stage has none. NotFound for an unknown run or stage, DataLoss for a stored series
  // that does not parse. (client_gpus.cc)
  Result<v1::ListGpuSeriesResponse> ListGpuSeries(const v1::ListGpuSeriesRequest& req);
  // A foreach stage of a run as a sweep: its items with their values, states, the chosen
  // metric's final and best values (and with include_series its values by step), costs, and
  // where the early_stop rule stopped each stopped item. InvalidArgument for a stage without
  // foreach or a workflow file that does not parse, NotFound for an unknown run or stage.
  // (client_sweep.cc)
  Result<v1::GetSweepResponse> GetSweep(const v1::GetSweepRequest& req);
  // Where a stage's result came from and which stages and later runs used it. NotFound for an
  // unknown run or stage. (client_lineage.cc)
  Result<v1::GetLineageResponse> GetLineage(const v1::GetLineageRequest& req);
  // Registers `watcher` for run `id`: it gets a snapshot first, then changes, and a final
  // update once the run has ended. NotFound for an unknown run.
  Status Watch(int64_t id, std::shared_ptr<scheduler::Watcher> watcher);
  // Notifications newest first, of one run or all (client_notify.cc).
  Result<v1::ListNotificationsResponse> ListNotifications(const v1::ListNotificationsRequest& req);
  // Sends a sample event to the request's sinks (or longhauld's own) on the calling thread
  // and says how each went. FailedPrecondition when there is no sink, or for a command sink
  // that longhauld does not allow; InvalidArgument for a bad URL, kind or format.
  Result<v1::TestNotifyResponse> TestNotify(const v1::TestNotifyRequest& req);
  // Call before serving.
  void set_notify(ClientNotifyConfig config) { notify_ = std::move(config); }
  // Who may use which priority class (--priority-allow). Call before serving.
  void set_priority_policy(scheduler::PriorityPolicy policy) { priority_ = std::move(policy); }
  // The team of each user whose token names none (--teams). Call before serving.
  void set_teams(std::map<std::string, std::string> teams) { teams_ = std::move(teams); }
  // Sets a run's GPU-hour budget (Scheduler::SetRunBudget), `req.by` naming the caller.
  Result<v1::Run> SetRunBudget(const v1::SetRunBudgetRequest& req);
  // Changes a run's class (Scheduler::SetRunPriority) when `req.submitter` may use the new
  // one: an admin always, anyone else by --priority-allow (PermissionDenied naming the rule,
  // as at submission). InvalidArgument for an unknown class. (client_priority.cc)
  Result<v1::Run> SetRunPriority(const v1::SetRunPriorityRequest& req);
  // Tags (client_tags.cc, docs/workflow-format.md "Tags"): Scheduler::SetTag and RemoveTag on
  // the loop, `req.by` naming the caller; ListTags reads the store.
  Result<v1::Tag> SetTag(const v1::SetTagRequest& req);
  Result<v1::Tag> RemoveTag(const v1::RemoveTagRequest& req);
  Result<v1::ListTagsResponse> ListTags(const v1::ListTagsRequest& req);
  // Fills run->tags (those on its stages) and run->tag_uses (its resolved references).
  Status AddRunTags(v1::Run* run);
  // Fills each listed run's tags (not its tag_uses): the runs list's tag chips.
  Status AddListedRunTags(v1::ListRunsResponse* resp);
  // Sets a team's or a workflow name's budget (Scheduler::SetScopeBudget); lists them.
  Result<v1::ScopeBudget> SetBudget(const v1::SetBudgetRequest& req);
  Result<v1::ListBudgetsResponse> ListBudgets(const v1::ListBudgetsRequest& req);
  // Reservations of agents' GPUs (docs/scheduling.md, "Reservations").
  Result<v1::Reservation> Reserve(const v1::ReserveRequest& req);
  Result<v1::Reservation> Unreserve(const v1::UnreserveRequest& req);
  Result<v1::ListReservationsResponse> ListReservations(const v1::ListReservationsRequest& req);
  Result<v1::ScopeBudget> RemoveBudget(const v1::RemoveBudgetRequest& req);
  // Quotas at run time (Scheduler::SetQuota, RemoveQuota, ListQuotas).
  Result<v1::Quota> SetQuota(const v1::SetQuotaRequest& req);
  Result<v1::Quota> RemoveQuota(const v1::RemoveQuotaRequest& req);
  Result<v1::ListQuotasResponse> ListQuotas(const v1::ListQuotasRequest& req);

  // The audit trail, newest first.
  Result<v1::ListAuditResponse> ListAudit(const v1::ListAuditRequest& req);
  // Copies the database to req.path on the coordinator's host while the scheduler goes on,
  // and checks the copy (store::BackupDatabase: its errors). Runs on the caller's thread.
  // (client_audit.cc)
  Result<v1::BackupResponse> Backup(const v1::BackupRequest& req);
  // Records a mutation (who, what, from where, its outcome) in the audit trail. The entry is
  // appended on the scheduler loop (the store's one writer) and commits with its next batch;
  // a failed write is logged and the entry dropped. (client_audit.cc)
  void Audit(const auth::Principal& who, auth::Action action, const AuditSubject& subject,
             const Status& status);
  // The coordinator's metrics in Prometheus' text format: its counters, the scheduler's
  // gauges (read on the loop) and the runs by status (from the store). (client_metrics.cc)
  Result<std::string> MetricsText();
  // OK when the scheduler loop runs a batch and commits it within `timeout_ms`; Unavailable
  // (saying why: a failing commit, a loop that does not answer) otherwise. For /readyz.
  Status Ready(int64_t timeout_ms);
  // The counters MetricsText() reports (not owned; may be null: then only gauges).
  void set_metrics(const metrics::CoordinatorMetrics* m) { metrics_ = m; }
  // Told after each submission was stored, so that a big one's parse and plan go back to the
  // system (not owned; may be null: nothing is handed back).
  void set_memory_policy(MemoryPolicy* m) { memory_ = m; }

  // Retention (client_gc.cc): the daemon's policy, used where a request leaves it 0. Both 0:
  // nothing is collected unless runs are named.
  struct RetentionPolicy {
    int64_t older_than_ms = 0;  // runs that ended longer ago
    int keep_last = 0;          // per workflow, runs beyond the newest N
  };
  void set_retention(RetentionPolicy policy) { retention_ = policy; }
  // Chooses ended runs (req.run_ids, or the policy), and for each: marks it collected and
  // deletes its event rows (one commit), then has its agents remove its attempt and output
  // directories but those of stages the cache still reuses (SqliteStore::PlanRunGc). A dry
  // run changes nothing and says what would go. Errors of one run (an agent not connected)
  // are in its entry; the others go on.
  Result<v1::GcResponse> CollectGarbage(const v1::GcRequest& req);
  // The `retention:` block of each workflow (only `workflow_name`, when not "") whose newest
  // run's file has one; the file as last submitted decides for the workflow.
  Result<std::map<std::string, workflow::RetentionSpec>> DeclaredRetention(
      const std::string& workflow_name);

 private:
  Result<v1::SubmitRunResponse> SubmitOnce(const v1::SubmitRunRequest& req);
  Result<v1::SubmitRunResponse> PivotOnce(const v1::PivotRunRequest& req);
  Result<v1::SubmitRunResponse> PlanAndSubmit(std::shared_ptr<scheduler::SubmitInput> input,
                                              const v1::PlanPage& page);
  // Who submits and how urgent: the submitter's name and team (the token's, else --teams'),
  // the class the policy allows
  // them (`requested`, else the workflow's), the budget (`gpu_hours` > 0, else the
  // workflow's). PermissionDenied for a class they may not use.
  Status ApplyRunPolicy(const v1::Submitter& who, const std::string& requested, double gpu_hours,
                        bool hard, scheduler::SubmitInput* input) const;
  // Checks that reused artifacts still exist on their agents; re-runs a stage whose are gone.
  void CheckReusedArtifacts(scheduler::RunPlan* plan);
  // Sends `request` to `agent` through the loop and waits for its answer.
  Result<v1::AttemptsRemoved> RemoveOnAgent(const std::string& agent, v1::RemoveAttempts request);

  scheduler::Scheduler* scheduler_;
  scheduler::SchedulerLoop* loop_;
  store::SqliteStore* store_;
  int64_t log_timeout_ms_;
  const Clock* clock_;
  const metrics::CoordinatorMetrics* metrics_ = nullptr;
  MemoryPolicy* memory_ = nullptr;
  RetentionPolicy retention_;
  std::mutex retention_mu_;  // guards declared_retention_ (the gc thread and RPCs)
  std::map<int64_t, workflow::RetentionSpec> declared_retention_;  // by stored workflow file id
  SubmissionLedger submissions_;
  ClientNotifyConfig notify_;
  scheduler::PriorityPolicy priority_;
  std::map<std::string, std::string> teams_;
};

}  // namespace longhaul::rpc

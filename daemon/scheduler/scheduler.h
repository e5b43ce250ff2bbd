// The scheduler: runs workflow DAGs on agents. A state machine driven by three kinds of input
// (client calls, agent messages, timers) on one thread (SchedulerLoop); no polling.
//
// Each batch of inputs runs inside one store transaction: handlers mutate the in-memory model
// and mark rows dirty; FlushToStore() writes them; after the commit AfterCommit() sends the
// queued agent messages and watch updates. Nothing leaves the coordinator before the decision
// behind it is durable, so a crash at any point is recovered from the store (Recover()) plus
// what agents report when they reconnect.
//
// Thread-safety: none; every method runs on the loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/status.h"
#include "daemon/metrics/metrics.h"
#include "daemon/notify/notifier.h"
#include "daemon/scheduler/agent_link.h"
#include "daemon/scheduler/agent_registry.h"
#include "daemon/scheduler/batch.h"
#include "daemon/scheduler/gpu_fleet.h"
#include "daemon/scheduler/gpu_telemetry.h"
#include "daemon/scheduler/maintenance.h"
#include "daemon/scheduler/model.h"
#include "daemon/scheduler/options.h"
#include "daemon/scheduler/planner.h"
#include "daemon/scheduler/preemption.h"
#include "daemon/scheduler/priority.h"
#include "daemon/scheduler/quota.h"
#include "daemon/scheduler/quota_admin.h"
#include "daemon/scheduler/ready_queue.h"
#include "daemon/scheduler/reservation.h"
#include "daemon/scheduler/run_table.h"
#include "daemon/scheduler/scope_budget.h"
#include "daemon/scheduler/stop_notice.h"
#include "daemon/scheduler/timer_queue.h"
#include "daemon/scheduler/watcher.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/workflow.h"
#include "longhaul/v1/agent.pb.h"
#include "longhaul/v1/client.pb.h"

namespace longhaul::scheduler {

struct SubmitInput {
  workflow::Workflow workflow;  // parsed and validated by the caller
  std::string text;
  std::string path;
  std::string hash;
  std::map<std::string, std::string> overrides;  // --set
  bool dry_run = false;
  bool no_cache = false;
  std::optional<int64_t> parent_run_id;
  std::string from_stage;
  v1::SourceState source;  // the file's repository (a pivot: its parent's); kind "": none
  // Who submits it and how urgent (docs/scheduling.md): the caller's name and team, the class
  // the PriorityPolicy resolved ("" is normal), and the budget (--budget, else the workflow's).
  std::string user;
  std::string team;
  std::string priority;
  workflow::BudgetSpec budget;
};

struct SubmitOutput {
  // Empty on a dry run. The run's summary: no stages, stage_counts filled (a submission's
  // answer must not grow with the run; GetRun and WatchRun have the stages).
  v1::Run run;
};

using LogCallback = std::function<void(Result<v1::LogData>)>;

// What /metrics shows of the scheduler's state, read on the loop at scrape time.
struct SchedulerGauges {
  std::map<std::string, int64_t> stages;  // stages of the runs in memory, by status name
  std::map<std::string, int64_t> agents;  // by state name
  int64_t gpus_total = 0;                 // of connected agents
  int64_t gpus_busy = 0;                  // held by attempts
  int64_t gpus_out = 0;                   // out of service (quarantined or drained), not busy
  // Every GPU of the connected agents, with its service state and last reading.
  struct Gpu {
    std::string agent;
    v1::GpuInfo info;
  };
  std::vector<Gpu> gpus;
  struct Running {
    int64_t run_id = 0;
    std::string stage;
    std::string agent;
    double progress_ratio = -1;  // -1: unknown (no progress with a total)
    double eta_seconds = -1;     // -1: unknown
  };
  std::vector<Running> running;  // stages with an attempt running now
  struct AgentDisk {
    std::string agent;
    bool full = false;
    int64_t free_bytes = 0;
  };
  std::vector<AgentDisk> agent_disks;  // connected agents' state dirs, as they report them
  // Each team that has a quota, runs attempts on GPUs, or has fair-share use (docs/scheduling.md,
  // "Quotas"), by name: the GPUs its running attempts hold, those of them beyond its guarantee
  // (its borrowed attempts, as BorrowedAttempts counts them; 0 without --quota), and its GPU-hours
  // decayed with the fair-share half-life (-1 without --fair-share-half-life).
  struct Team {
    std::string team;
    int64_t gpus_in_use = 0;
    int64_t gpus_borrowed = 0;
    double decayed_gpu_hours = -1;
  };
  std::vector<Team> teams;
};

class Scheduler {
 public:
  Scheduler(store::SqliteStore* store, Clock* clock, AgentLink* link, SchedulerOptions options);
  ~Scheduler();

  // Drops the in-memory model and loads active runs and known agents from the store (at start,
  // and after a failed commit). Must run inside a transaction. What the batch so far decided
  // is dropped whole (nothing of it is written, sent, pushed to watchers or run after a
  // commit); agent sessions are closed, and requests waiting on agents get Unavailable.
  Status Recover();

  // --- client API ---
  // Stores the run as `plan` says (PlanRun + artifact checks + FinalizePlan); without a plan,
  // plans here without checking artifacts.
  Result<SubmitOutput> Submit(SubmitInput input, std::optional<RunPlan> plan = std::nullopt);
  Result<v1::Run> Cancel(int64_t run_id);
  // Re-runs `stage` (or every failed/cancelled stage when empty) and its dependents that did
  // not succeed; continues a run that already ended.
  Result<v1::Run> Retry(int64_t run_id, const std::string& stage);
  // Sets the run's GPU-hour budget (`by` names the admin); a run the old one paused continues
  // when the new one is above what it used. NotFound / FailedPrecondition for a run that is
  // unknown or has ended; InvalidArgument for hours <= 0. (budget_sched.cc)
  Result<v1::Run> SetRunBudget(int64_t run_id, double gpu_hours, const std::string& by);
  // Changes run `run_id`'s priority class and stores it: its stages in the ready queue move to
  // their new place at once; running attempts are not touched. Whether the caller may is the
  // client API's. NotFound / FailedPrecondition for a run that is unknown or has ended;
  // InvalidArgument for an unknown class. (priority_change.cc)
  Result<v1::Run> SetRunPriority(int64_t run_id, const std::string& priority);
  // Tags (tags.cc, docs/workflow-format.md "Tags"). SetTag names stage `stage` of run `run_id`
  // `name`: NotFound for an unknown run or stage, FailedPrecondition for a stage that has not
  // succeeded (naming its state) or a name set elsewhere without `force` (with it, the tag
  // moves and the answer's `previous` says from where). RemoveTag: NotFound when none.
  Result<v1::Tag> SetTag(const std::string& name, int64_t run_id, const std::string& stage,
                         bool force, const std::string& by);
  Result<v1::Tag> RemoveTag(const std::string& name);
  // Sets the budget of a team's or a workflow name's runs (`req.by` names the admin): the runs
  // it paused continue when the new one is above the scope's use in the period; `hard` stops
  // the running ones of a scope at 100 %. InvalidArgument for a bad scope, name, hours <= 0 or
  // a period under an hour. Every budget, by scope and name. (scope_budget_sched.cc)
  Result<v1::ScopeBudget> SetScopeBudget(const v1::SetBudgetRequest& req);
  std::vector<v1::ScopeBudget> ListScopeBudgets() const;
  // Removes a team's or a workflow name's budget: the runs it paused continue. NotFound (with
  // a did-you-mean) when the scope has none. (budget_admin_sched.cc)
  Result<v1::ScopeBudget> RemoveScopeBudget(const v1::RemoveBudgetRequest& req);
  // Quotas at run time (quota_admin_sched.cc; docs/scheduling.md, "Changing quotas at run
  // time"): SetQuota stores a team's whole quota, which wins over --quota from then on;
  // RemoveQuota removes it (--quota's too; NotFound, with a did-you-mean, for a team with no
  // quota). Both take effect at the next dispatch pass: nothing running is stopped.
  // InvalidArgument naming the team and what is wrong (quota_admin.h, QuotaOfRequest).
  // ListQuotas: each account's quota and use (`longhaul quotas`).
  Result<v1::Quota> SetQuota(const v1::SetQuotaRequest& req);
  Result<v1::Quota> RemoveQuota(const v1::RemoveQuotaRequest& req);
  v1::ListQuotasResponse ListQuotas() const;
  std::vector<v1::AgentInfo> ListAgents() const;
  // True while run `run_id` is in memory and has not ended (retention leaves it alone).
  bool RunIsActive(int64_t run_id) const;
  // Registers `watcher` and pushes a snapshot of the run to it (final when the run has ended).
  Status Watch(int64_t run_id, std::shared_ptr<Watcher> watcher);
  // Asks the attempt's agent for a piece of its log; `done` runs on the loop thread.
  void ReadLog(const store::AttemptRow& attempt, const v1::ReadLogRequest& request,
               LogCallback done);
  // Asks `agent_id` which of `paths` are missing; `done` gets the missing ones.
  void CheckArtifacts(const std::string& agent_id, const std::vector<std::string>& paths,
                      std::function<void(Result<std::vector<std::string>>)> done);
  // Asks `agent_id` to remove (or, dry run, measure) ended attempts' directories and output
  // dirs (retention); `done` gets the agent's answer, or Unavailable when it is not connected
  // or disconnects first.
  void RemoveAttempts(const std::string& agent_id, v1::RemoveAttempts request,
                      std::function<void(Result<v1::AttemptsRemoved>)> done);

  // GPUs by hand (`longhaul gpu drain|undrain`): takes GPU `index` of `agent_id` (every GPU
  // when negative) out of service, or brings it back (also a quarantined one). A drained GPU
  // runs what it runs to its end and is offered nothing new. `by`: the principal, for the
  // record. Returns the GPUs' states after.
  Result<std::vector<v1::GpuInfo>> SetGpuService(const std::string& agent_id, int index, bool drain,
                                                 const std::string& reason, const std::string& by);

  // Maintenance windows (`longhaul agent drain|undrain`, maintenance_sched.cc): from now on,
  // `agent_id` is offered only attempts that end (timeout plus grace) by `at_ms` (0 or a time
  // past: now), and at `at_ms` what still runs there is stopped and queued again with no retry
  // spent; or (`undrain`) the drain is removed. Stored. Returns the agent after. NotFound for
  // an unknown agent; FailedPrecondition for an undrain of an agent not drained.
  Result<v1::AgentInfo> SetAgentDrain(const std::string& agent_id, int64_t at_ms, bool undrain,
                                      const std::string& reason, const std::string& by);

  // Reservations (`longhaul reserve|unreserve|reservations`, reservation_sched.cc): GPUs of an
  // agent held for a user or team for a window (docs/scheduling.md, "Reservations"). Stored.
  // Reserve: NotFound for an unknown agent, InvalidArgument for a bad window or GPU count
  // (ValidateReservation); `req.by()` is the principal. Unreserve: NotFound unless in force or
  // to come. ListReservations: current and future ones, or with `all` every one.
  Result<v1::Reservation> Reserve(const v1::ReserveRequest& req);
  Result<v1::Reservation> Unreserve(int64_t id, const std::string& reason, const std::string& by);
  Result<std::vector<v1::Reservation>> ListReservations(bool all);

  // --- agent API (session ids come from the rpc layer, unique per stream) ---
  void OnAgentConnected(uint64_t session, const v1::Hello& hello);
  void OnAgentMessage(uint64_t session, const v1::AgentMessage& msg);
  void OnAgentDisconnected(uint64_t session);

  // --- time ---
  // `lag_ms`: how late the loop woke up compared with when it meant to; a large lag means the
  // coordinator itself was stalled (SIGSTOP, swap), and agents get grace for it.
  void Tick(int64_t lag_ms = 0);
  std::optional<int64_t> NextDeadline() const;

  // --- batch boundary (called by the loop) ---
  void Dispatch();        // places ready stages on agents with room
  Status FlushToStore();  // writes every dirty row
  // Sends queued messages, publishes watch updates, evicts ended runs; returns how many stages
  // the evicted runs had (for the loop's MemoryPolicy, core/memory_policy.h).
  size_t AfterCommit();
  // Sizes the tables, the batch's lists and the store's caches to what is left: after big runs
  // were evicted, when the loop's MemoryPolicy says so.
  void ShrinkToFit();

  // Notifications (docs/operations.md): each event that `daemon_spec` or the run's workflow
  // wants becomes a row in the batch's transaction and goes to `notifier` after the commit.
  // `notifier` is not owned; null (the default): no notifications. Call before the loop starts.
  void set_notifications(notify::Notifier* notifier, workflow::NotifySpec daemon_spec) {
    notifier_ = notifier;
    notify_spec_ = std::move(daemon_spec);
  }
  // The UI's address, for the run's link in notifications ("" : none). On the loop thread.
  void set_ui_base(std::string base) { ui_base_ = std::move(base); }

  // Counters for /metrics (not owned; may be null).
  void set_metrics(metrics::CoordinatorMetrics* m) { metrics_ = m; }
  SchedulerGauges Gauges() const;

  // Quotas (docs/scheduling.md, "Borrowing"): the running attempts on borrowed GPUs (beyond
  // their account's guarantee), and those that would be reclaimed so that `account` (e.g.
  // "team:vision"), under its guarantee, can start `gpus` more GPUs within it: borrowed
  // attempts of other accounts, newest first; empty when none would. Nothing is stopped here:
  // preemption decides whether and how to stop them. (quota_sched.cc)
  std::vector<int64_t> BorrowedAttemptIds() const;
  std::vector<int64_t> ReclaimFor(const std::string& account, int32_t gpus) const;

  // For tests and benchmarks.
  size_t active_runs() const { return runs_.size(); }
  const RunState* FindRun(int64_t run_id) const;

 private:
  // submit.cc
  // Inserts the run's row and builds its stages (not inserted yet: InsertStages).
  Result<std::unique_ptr<RunState>> CreateRun(SubmitInput input, const RunPlan& plan, int64_t now);
  // Inserts the stages, each with its fingerprint from `plan` (made into text one stage at a
  // time and dropped once stored, so a big run never holds them all), and empties `plan`.
  Status InsertStages(RunState* r, RunPlan* plan);
  // Undoes what readiness did to the scheduler's sets for a run whose insertion failed.
  void ForgetNewRun(RunState* r);

  // scheduler.cc: runs and stages
  Result<RunState*> LoadRunIntoMemory(int64_t run_id);
  Status BuildRunState(RunState* run, std::vector<store::StageRow> stages,
                       std::vector<store::AttemptRow> attempts);
  void SetStageStatus(StageState* s, v1::StageStatus status, const std::string& reason);
  // "waiting for an agent with 1 cpus free": the reason of a ready stage.
  static std::string WaitingReason(const v1::Resources& need);
  // Counts every stage of `run` by status (after its stages were built from rows).
  void CountStages(RunState* run);
  // What attempt `a` adds to its run's GPU totals now (GpuUse).
  static GpuUse GpuUseOf(const AttemptState& a);
  // Marks `run`'s totals for writing at the batch's end (FlushToStore).
  void TouchTotals(RunState* run);
  // Brings `a`'s share of its run's GPU totals up to date with its row (before it is written).
  void CountGpuUse(AttemptState* a);
  void MarkReady(StageState* s);
  void StageSucceeded(StageState* s);
  // `last` is the attempt whose end failed the stage, if one did: its number and agent go into
  // the stage_failed notification (null for a stage that failed before it could start).
  void StageFailed(StageState* s, v1::StageStatus status, const std::string& reason,
                   const AttemptState* last = nullptr);
  void SkipDependents(StageState* s);
  bool DepsSatisfied(const StageState* s) const;

  // budget_sched.cc: GPU-hour budgets (docs/scheduling.md). CheckBudget notifies at 80 % and
  // pauses the run at 100 % (its ready stages leave the queue; `hard`: its attempts stop), or
  // resumes it when the budget is above its use again, and arms the timer for the next
  // threshold. BudgetHolds: true when `s`, just made ready, must wait for the budget (its
  // reason is set). BudgetCheckSoon: after the run's GPU use changed rate.
  void CheckBudget(RunState* run);
  bool BudgetHolds(StageState* s);
  void BudgetCheckSoon(RunState* run);
  void FillBudget(const RunState& run, v1::Run* out) const;
  // What pauses a run: its own budget reached, or a team's or workflow's (scope_reason, the
  // first one's reason); `hard` when any of those reached is hard. ApplyBudgetHold pauses
  // (ready stages leave the queue; `hard`: running attempts stop) or resumes the run to match.
  struct BudgetHold {
    std::string reason;
    std::string scope_reason;
    bool hard = false;
  };
  std::optional<BudgetHold> BudgetHoldOf(const RunState& run) const;
  void ApplyBudgetHold(RunState* run);
  // Writes the run's budget_hold (a scope's reason, "" for none) when it changed.
  void RecordBudgetHold(RunState* run, const std::string& scope_reason);

  // scope_budget_sched.cc: budgets of a team's or a workflow name's runs. LoadScopeBudgets
  // (Recover, before the runs) reads them and what ended attempts used in their periods;
  // RecoverScopeUse (after the runs) adds the running attempts and checks each. CountScopeUse:
  // an attempt's GpuUse changed (CountGpuUse). CheckScopeBudget notifies once per threshold and
  // period and, when the scope crossed 100 % either way (or `apply_to_all`), applies the hold
  // to each run it covers; it arms the next check. ScopeHoldOf: the reason of the first reached
  // scope budget covering `run`, and sets *hard when one of those is hard.
  Status LoadScopeBudgets();
  void RecoverScopeUse();
  void CountRunningScopeUse(ScopeBudget* b);
  void CountScopeUse(const AttemptState& a, const GpuUse& before, const GpuUse& now);
  void CheckScopeBudget(ScopeBudget* b, bool apply_to_all);
  void FireScopeBudgetTimer(const Timer& t);
  std::optional<std::string> ScopeHoldOf(const RunState& run, bool* hard) const;
  v1::ScopeBudget SnapshotScopeBudget(const ScopeBudget& b) const;

  // preemption_sched.cc: a waiting stage of a higher class takes room from running attempts
  // of lower classes (docs/scheduling.md, "Preemption"). PreemptFor: for ready task `s` that
  // found no room, the agent where room is being made for it (stops asked now, or asked before
  // and not all ended), or null; appends to `reason` what it waits for. PreemptedEnded: true
  // when `a` (of `s`) ended as a preemption stopped it; then its infrastructure retry is spent and
  // what it lost counted, and the caller puts `s` back to be run again.
  AgentState* PreemptFor(StageState* s, std::string* reason);
  bool PreemptedEnded(StageState* s, AttemptState* a, const std::string& kind);
  // Whether running attempt `v` may be stopped for a stage of class `rank`.
  bool MayPreempt(const AttemptState* v, int rank) const;
  // What the waiting stage of `p` waits for: "; preempting ..." or "; asked ... to checkpoint".
  std::string PreemptWaitReason(const PreemptionBook::Pending& p) const;
  // When `a`'s work that its next attempt would not redo was last saved: its last checkpoint
  // (a `resume` stage's), else its start.
  static int64_t SavedUpTo(const AttemptState& a);
  // stop_notice_sched.cc: a notice before a stop (docs/scheduling.md, "A notice before the
  // stop"). StopAtCheckpoint: stops running `a` as StopAttempt(a, kind, detail) does, unless its
  // stage has `preempt_notice`: then it is sent a notice and stopped at its next checkpoint
  // (NoticedCheckpoint, from ingest) or when the notice ends (FireStopNoticeTimer), whichever
  // comes first; true when a notice is out (sent now or before). `text` names it in a waiting
  // stage's reason. NoticeReason: "; asked ... to checkpoint (notice until ...)" for those of
  // `victims` with a notice out ("" for none), and how many they are.
  bool StopAtCheckpoint(AttemptState* a, const std::string& kind, const std::string& detail,
                        const std::string& text = "");
  void NoticedCheckpoint(AttemptState* a);
  void FireStopNoticeTimer(const Timer& t);
  std::string NoticeReason(const std::set<int64_t>& victims, const std::string& agent_id,
                           size_t* noticed) const;
  // "run 12 stage train (low)": a stage as preemption's reasons and audit entries name it.
  static std::string PreemptStageText(const StageState& s);
  // preemption_recovery.cc, at Recover once the runs are loaded: the book of the preemptions
  // still stopping, from the stops stored on their victims (AttemptRow::stop_for_stage_id).
  void RecoverPreemptions();
  // maintenance_sched.cc: drains of agents (docs/scheduling.md, "Maintenance").
  // DrainKeepsOff: `a`'s drain keeps `s` off it (the fit rule, maintenance.h). DrainHolds: in
  // a dispatch pass, for `s` that found no agent: true (the reason of `s` names the drain; the
  // pass goes on to the next stage of its shape) when drains keep it off every agent that
  // could hold it, or off one with room now while it asks for no GPUs. DrainDue: the drain's
  // time came (timer): its attempts are stopped.
  Status LoadDrains();
  void ArmDrainTimer(const store::AgentDrainRow& d);
  bool DrainKeepsOff(const StageState* s, const AgentState& a) const;
  bool DrainHolds(StageState* s);
  void DrainDue(const std::string& agent_id, uint64_t generation);
  void FillDrain(const std::string& agent_id, v1::AgentInfo* out) const;
  // reservation_sched.cc: reservations of GPUs (reservation.h). ReservedFrom: how many of
  // `a`'s free GPUs its reservations keep from `s` now. ReservationKeepsOff: they leave it too
  // few free GPUs now; ...Ever: too few even with all of the agent's GPUs free.
  // ReservationReason: ": 4 of n1's 8 GPUs are reserved for ..." when one keeps `s` off an
  // agent that could hold it, else "". ReservationDue: a window's "start" or "end" (timer).
  Status LoadReservations();
  void ArmReservationTimers(const store::ReservationRow& r);
  int HolderGpusOn(const AgentState& a, const store::ReservationRow& r) const;
  int ReservedFrom(const StageState* s, const AgentState& a,
                   const store::ReservationRow** first) const;
  bool ReservationKeepsOff(const StageState* s, const AgentState& a) const;
  bool ReservationKeepsOffEver(const StageState* s, const AgentState& a) const;
  std::string ReservationReason(const StageState* s) const;
  // In a dispatch pass, for `s` that found no agent: true (its reason names the reservation;
  // the pass goes on to the next stage of its shape, which may be the holder's) when only a
  // reservation keeps it off an agent with room for it now.
  bool ReservationHolds(StageState* s);
  void ReservationDue(int64_t id, const std::string& edge);
  void FillReservations(const std::string& agent_id, v1::AgentInfo* out) const;

  // services.cc: readiness for tasks and services, and the life of a service
  static bool IsService(const StageState* s);
  // A waiting stage becomes ready when its dependencies allow (a service: only when some
  // dependent must really run), or skipped when one of them failed.
  void MaybeReady(StageState* s);
  bool ServiceWanted(const StageState* s) const;
  // After `s` changed state: its dependents may be ready, services they need may be wanted,
  // services `s` needed may no longer be.
  void Propagate(StageState* s);
  void MaybeStopService(StageState* s);
  // A service's attempt ended; true when handled (the stage is done with it).
  bool ServiceAttemptEnded(AttemptState* a, const std::string& kind, const std::string& reason);
  void MaybeFinishRun(RunState* run);
  // Which stages a snapshot carries: those changed since the last watch update, every one, or
  // the first page with the counts of all (what Cancel and Retry answer, as GetRun does,
  // whatever the run's size).
  enum class StageSet { kChanged, kAll, kFirstPage };
  v1::Run SnapshotRun(const RunState& run, StageSet stages) const;
  void MarkChanged(StageState* s);
  // Mark a row for writing at the batch's end.
  void Touch(RunState* r);
  void Touch(StageState* s);
  void Touch(AttemptState* a);
  void Touch(AgentState* a);
  // After a commit: drops the attempts that ended from memory (their rows are stored), keeping
  // their wall time in the stage. What a run holds then is its live attempts only.
  void ReleaseEndedAttempts();
  // Drops from a stored stage row the columns fixed at submission that only snapshots use
  // (see StageState).
  static void DropStaticColumns(store::StageRow* row);

  // placement.cc: which agent a ready stage goes to
  static bool Fits(const v1::Resources& free, const v1::Resources& req);
  // The agent for `s`: connected, with room, labels matching its node_selector, not avoided;
  // among those its resume node, else the one holding most of its upstream stages' outputs,
  // else the one with most free CPUs. Null when none.
  AgentState* PickAgent(const StageState* s);
  // The agent a stage that asks for GPUs and finds no room waits for (Dispatch reserves what it
  // needs there): connected, labels matching, not avoided, with the capacity to hold it when
  // enough has ended; among those the one with most GPUs free. Null when no agent ever could.
  AgentState* GangAgent(const StageState* s);
  // The ReadyQueue placement key of `s`: "" unless it has a node_selector, avoids agents, or
  // reads files that stages it needs left on some agent.
  static std::string PlacementKey(const StageState* s);
  // Data locality: whether a stage on `a` can read every file its needs left (each output that
  // is an absolute path). One left on another agent can be read only under a path prefix that
  // both agents declare shared (--shared-path).
  bool CanReadInputs(const StageState* s, const AgentState& a) const;
  // Whether `s` may go to `a`, room aside: connected, labels matching, not avoided, inputs
  // readable.
  bool MayGoTo(const StageState* s, const AgentState& a) const;
  // For ReadyReason: "" when its inputs do not narrow where it may go; " on n1 (...)" to append
  // when they do; a whole reason, not starting with a space, when no agent it may go to can
  // read them ("waiting for agent n1, which holds the outputs of extract (...)").
  std::string LocalityReason(const StageState* s) const;
  // What a ready stage waits for: "no agent is connected (waiting for an agent with 1 cpus
  // free)" when none is; "no agent matches node_selector {gpu: h200}" when no connected agent
  // has its labels; else WaitingReason (plus the agents it avoids). After a preemption, it
  // starts with who preempted it: "preempted by run 41 stage eval (high) at 10:52:03 UTC; ".
  std::string ReadyReason(const StageState* s) const;
  std::string ReadyReasonAlone(const StageState* s) const;
  // After node_fail on `agent`: later attempts of `s` avoid the node (`node`, for an agent
  // that submits to a cluster) or the agent.
  void AvoidFailedNode(StageState* s, const AgentState& agent, const std::string& node);

  // service_admission.cc: starting services so that they cannot starve their consumers
  // (docs/architecture.md, "Services and their consumers").
  // Starts ready service `s` together with the other services of one of its consumers, when
  // they and that consumer fit together; reserves the consumer's resources (a ConsumerHold)
  // until it starts. False when no consumer's group fits now.
  bool AdmitService(StageState* s);
  // Inside a dispatch pass: takes the holds' resources from their agents' free counts, and
  // gives them back (at the pass's end, or for the one consumer being placed).
  void ApplyHolds();
  void UnapplyHolds();
  bool Unhold(const StageState* consumer);  // false: it holds nothing
  void Rehold(const StageState* consumer);
  // Drops the hold of `s` (it started or ended), or the holds made for service `s` (it left
  // the starting and serving states).
  void DropHolds(const StageState* s, v1::StageStatus status);
  // Whether `s` needs a service that is starting or serving.
  bool ConsumesLiveService(const StageState* s) const;
  // For the reason of a stage that finds no room: " (the room is held by service 'x', which
  // waits for it)" when, on an agent it may go to, services waiting for their consumers hold
  // what it lacks.
  std::string HeldByServices(const StageState* s) const;
  // The services with no running consumer whose room, on one agent `s` may go to, would let it
  // fit (and that agent); empty when none would.
  std::vector<const StageState*> ServicesHolding(const StageState* s, std::string* agent_id) const;
  // The backstop: when nothing runs but services and ready stages wait, stops the service
  // with no running consumer that frees the most; it becomes ready again (no retry spent).
  void BreakServiceWait();
  // Refuses a workflow a stage of which (with the services it needs) can never fit on the
  // registered agents. Nothing is refused while no agent is registered.
  Status CheckStagesFit(const workflow::Workflow& wf, const RunPlan& plan) const;

  // dispatch.cc
  Status StartAttemptOn(StageState* s, AgentState* agent);
  std::string OutputDir(const StageState* s, const AgentState* agent, int number) const;
  void ReleaseResources(AttemptState* a);
  void SendToAgent(const std::string& agent_id, const v1::CoordinatorMessage& msg);
  // Asks the agent to stop the attempt; `kind` becomes its failure kind ("cancelled",
  // "timeout", "stalled", "stale", ...), `detail` completes the reason.
  void StopAttempt(AttemptState* a, const std::string& kind, const std::string& detail = "");

  // attempts.cc: how attempts end
  void AttemptEnded(AttemptState* a, v1::AttemptState state, const std::string& kind,
                    const std::string& reason);
  void AttemptFailedOrSucceeded(StageState* s, AttemptState* a, const std::string& kind,
                                const std::string& reason);
  void HandleStarted(AttemptState* a, const v1::AttemptStarted& msg);
  void HandleExited(AgentState* agent, const v1::AttemptExited& msg);
  // The exit of an attempt that was already closed (lost or fenced) and ran on: recorded in its
  // history only. True when the row changed.
  static bool NoteLateExit(store::AttemptRow& row, const std::string& agent_id,
                           const v1::AttemptExited& msg);
  int64_t BackoffMs(const workflow::RetryPolicy& policy, int retry_number);

  // early_stop_sched.cc: sweeps with `early_stop` (docs/sweeps.md, "Early stopping")
  // Judges a metric value of a sweep item's current attempt `a`; stops the item (as cancel
  // stops one: SIGTERM, then grace) when the rule says it loses. Call before the value is
  // stored: a sweep's first value in memory makes its judge from the stored ones.
  void JudgeEarlyStop(AttemptState* a, const std::string& metric, int64_t step, double value);
  // The sweep's judge, made on first use from the values its items stored before.
  SweepJudge* JudgeOf(RunState* run, const workflow::EarlyStopSpec& spec);
  // The attempt of an item its rule stopped has ended: the item ends stopped_early.
  void StageStoppedEarly(StageState* s, const std::string& reason);
  // True (and `s` skipped, with the reason of one of them) when every item `s` needs of some
  // sweep stopped early: a stage that needs one item, or a whole sweep that lost every item.
  bool SkipIfSweepStopped(StageState* s);
  // True when a skipped stage of `run` was skipped for a failure or a cancel upstream (the run
  // failed), not only because items it needed stopped early.
  bool HasHarmfulSkip(const RunState* run) const;

  // ingest.cc
  void HandleEvents(AgentState* agent, const v1::AttemptEvents& msg);
  // Events of an attempt that is no longer in memory (its run ended meanwhile: a stale attempt
  // whose node came back late) go into its history in the store. False when the store has no
  // such attempt of this agent; on a store error sets *max_seq to -1 (nothing acknowledged).
  bool StoreEventsOfEndedRun(AgentState* agent, const v1::AttemptEvents& msg, int64_t* max_seq);
  void ApplyEvent(AttemptState* a, const StageEvent& ev, int64_t ts_ms);

  // agents.cc
  // What an agent says of its state dir (Hello, Heartbeat); logs when "full" changes.
  void NoteAgentDisk(AgentState* agent, bool full, int64_t free_bytes);
  void Reconcile(AgentState* agent, const v1::Hello& hello);
  void AgentHeard(AgentState* agent);
  void AgentSilent(AgentState* agent);
  void AgentLost(AgentState* agent);
  void ArmAgentTimers(AgentState* agent);
  void HandleLogData(const v1::LogData& msg);
  void HandleArtifactCheck(const v1::ArtifactCheck& msg);
  void HandleAttemptsRemoved(const v1::AttemptsRemoved& msg);

  // gpus.cc: GPU reports, quarantine, pre-flights, drains, telemetry (docs/gpus.md).
  AttemptState* AttemptOnGpu(const AgentState& agent, int index);
  bool GpuOut(const AgentState& agent, int index) const;
  // GPU `index` of `agent` left service, or came back: its free count follows (a busy GPU
  // counts when its attempt releases it: ReleaseResources).
  void GpuLeftService(AgentState* agent, int index);
  void GpuReturned(AgentState* agent, int index);
  void HandleGpuReport(AgentState* agent, const v1::GpuReport& msg);
  void HandleGpuChecked(AgentState* agent, const v1::GpuChecked& msg);
  // A GPU just taken out of service by a fault: not offered, the attempt on it stopped as
  // gpu_fault, the gpu_fault notice sent.
  void ActOnGpuFault(AgentState* agent, const GpuFleet::Fault& f);
  // The stage protocol's gpu_fault event of attempt `a` (a failed pre-flight).
  void OnStageGpuFault(AttemptState* a, const StageEvent& ev);
  // After a report fed `a`'s telemetry: warns when a GPU's memory nears its total, and notes
  // (or, on_gpu_idle: fail, stops as gpu_idle) GPUs idle for the stage's gpu_idle window.
  void WatchGpuUse(AttemptState* a, int64_t now);
  // Sends CheckGpu for each quarantined GPU whose cool-down has passed (connected agents).
  void AskGpuChecks(int64_t now);
  Status FlushGpus();

  // notices.cc: a notification for each sink that wants `kind` (run may be null: agent_lost).
  void Notice(const std::string& kind, const RunState* run, const StageState* s, int attempt,
              const std::string& reason, const std::string& agent = "");
  Status FlushNotices();

  // quota_sched.cc: quotas and fair share (docs/scheduling.md).
  bool QuotasOn() const;
  // `a` took its GPUs (StartAttemptOn) or gave them back (ReleaseResources).
  // UsageStarted: true when `a` starts beyond its share account's guarantee (borrowed GPUs).
  bool UsageStarted(const AttemptState* a);
  void UsageEnded(const AttemptState* a);
  // Rebuilds the usage ledger from the stored attempts and the live ones (end of Recover).
  Status LoadUsage();
  // Gives a run its fair-share position the first time one of its stages is queued.
  void AssignSharePos(RunState* run);
  // Computes the fair-share order again (when use changed, or a minute has passed, or
  // `force`) and moves the queued entries of runs whose position changed.
  void RefreshFairShare(bool force);
  // Before a dispatch pass: the fair-share order, and who waits under their guarantee.
  void PrepareQuotas();
  // True when a quota keeps `s` from starting now; its reason says which.
  bool QuotaHolds(StageState* s);
  std::vector<RunningShare> RunningShares() const;
  // The running attempts a preemption for `s` leaves alone for their account's guarantee
  // (SparedWithinGuarantee), by attempt id, with that account.
  std::map<int64_t, std::string> SparedFor(const StageState* s) const;
  // quota_admin_sched.cc: the stored quotas over --quota's (Recover, before LoadUsage), and
  // after a change, those with the usage ledger rebuilt for them.
  Status LoadStoredQuotas();
  Status ApplyQuotaBook();
  // budget_admin_sched.cc: the configuration's budgets into the store (Recover, before
  // LoadScopeBudgets).
  Status ApplyConfigBudgets();
  // team_gauges.cc: SchedulerGauges::teams.
  std::vector<SchedulerGauges::Team> TeamGauges() const;

  // timers.cc
  void ArmAttemptTimers(AttemptState* a);
  void FireTimer(const Timer& t);

  store::SqliteStore* store_;
  Clock* clock_;
  AgentLink* link_;
  SchedulerOptions options_;
  std::mt19937_64 rng_;
  int64_t started_at_ms_;
  int64_t last_tick_ms_;

  RunTable runs_;  // the runs in memory, their live attempts, each stage's run
  // Ids of every request sent to agents (AgentRegistry's and CheckGpu); never reset, so that
  // an answer from before a reload matches nothing after it.
  int64_t next_request_id_ = 1;
  AgentRegistry agents_{&next_request_id_};
  ReadyQueue ready_;
  TimerQueue timers_;

  // What the current batch decided: written by FlushToStore, let out by AfterCommit, dropped
  // whole by Recover.
  Batch batch_;
  bool dispatch_needed_ = false;
  // A consumer's reservation, made when a service started for it (AdmitService), kept until
  // it starts or no longer can. Keyed by (run id, stage index).
  struct ConsumerHold {
    std::string agent_id;
    v1::Resources need;
    std::vector<int> services;  // indexes in the consumer's run
    v1::Resources applied;      // taken from the agent's free count in this pass
  };
  std::map<std::pair<int64_t, int>, ConsumerHold> holds_;
  bool service_check_needed_ = false;  // a stage changed state: look for a service wait
  // Tasks started so far, and for each service stopped by BreakServiceWait the count when it
  // was: it starts again only after some task has started since, so stopping makes progress.
  uint64_t task_starts_ = 0;
  std::map<std::pair<int64_t, int>, uint64_t> yielded_;
  bool tasks_wait_ = false;  // in this dispatch, a ready task found no room
  // The reason SetStageStatus gave last: stages given the same text share it (LeanString), so
  // 100,000 stages waiting for the same room hold their reason once.
  LeanString last_reason_;

  // Quotas and fair share (quota_sched.cc): GPU use by account, each share account's position,
  // and the accounts under their guarantee that wait (for this dispatch).
  UsageLedger usage_;
  bool usage_changed_ = true;
  int64_t fair_share_at_ms_ = -1;
  std::map<std::string, int> share_pos_;
  std::vector<std::string> waiting_under_;
  int64_t quota_recheck_at_ms_ = 0;
  std::map<std::string, QuotaVerdict> quota_memo_;  // QuotaHolds' answers since use last changed
  // A stage of this pass waits for another account under its guarantee: an attempt that starts
  // later in the pass may take that account to its guarantee, and the next pass says so.
  bool held_for_guarantee_ = false;
  QuotaBook quota_book_;  // --quota's and the stored quotas (quota_admin.h)

  GpuFleet gpus_;
  Maintenance maintenance_;    // agents' drains
  Reservations reservations_;  // GPUs held for a user or team (reservation_sched.cc)
  GpuTelemetry gpu_telemetry_;
  std::vector<store::GpuSeriesRow> gpu_rows_;  // ended attempts' series, written at the flush
  // The scheduler's own decisions for the audit trail: GPUs returned by pre-flights, attempts
  // preempted.
  std::vector<v1::AuditEntry> gpu_audit_;
  PreemptionBook preemptions_;  // stops asked for waiting stages (preemption_sched.cc)
  StopNotices notices_;         // notices out before stops (stop_notice_sched.cc)

  // Registered watchers (after the commit of the batch that registered them), by run.
  std::map<int64_t, std::vector<std::shared_ptr<Watcher>>> watchers_;
  metrics::CoordinatorMetrics* metrics_ = nullptr;
  notify::Notifier* notifier_ = nullptr;
  workflow::NotifySpec notify_spec_;
  std::string ui_base_;
  // Budgets of teams and workflow names, by "scope/name" (scope_budget_sched.cc).
  std::map<std::string, std::unique_ptr<ScopeBudget>> scope_budgets_;
};

}  // namespace longhaul::scheduler

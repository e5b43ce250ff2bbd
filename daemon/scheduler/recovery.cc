// Loading the model from the store: at coordinator start, after a failed commit, and when a
// manual retry brings an ended run back.
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/resources.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

// Replaces `*x` with a new one: nothing of the old is kept (capacity and bookkeeping included).
template <typename T>
void ResetWhole(T* x) {
  *x = T();
}

}  // namespace

Status Scheduler::Recover() {
  for (uint64_t session : agents_.Sessions()) link_->Close(session);
  // Their callers wait: each gets an answer. The messages that asked went out with committed
  // batches, or were in the outbox dropped below.
  agents_.FailAllRequests(absl::UnavailableError("coordinator state reloaded"));
  // What the failed batch decided: its rows went with the transaction, and nothing of it may
  // leave (agent messages, watch updates, callbacks, notifications). Its lists point into the
  // model, which goes next.
  batch_ = Batch{};
  // The model, loaded again below.
  ResetWhole(&runs_);
  agents_ = AgentRegistry(&next_request_id_);  // the request ids go on from where they were
  ResetWhole(&ready_);
  ResetWhole(&timers_);
  ResetWhole(&holds_);
  ResetWhole(&yielded_);
  preemptions_.Clear();
  notices_.Clear();

  int64_t now = clock_->NowMs();
  started_at_ms_ = now;
  last_tick_ms_ = now;
  // Agents known from before. None is connected yet; each gets the full grace period from now,
  // so the coordinator's own downtime never counts against an agent.
  ASSIGN_OR_RETURN(auto gpu_rows, store_->LoadGpus());
  gpus_.Load(std::move(gpu_rows));
  // gpu_rows_ stays: ended attempts' telemetry, whole series from the agents' reports, is
  // written again by the next batch (gpu_telemetry_ likewise keeps the running ones').
  gpu_audit_.clear();
  ASSIGN_OR_RETURN(auto agent_rows, store_->LoadAgents());
  for (auto& row : agent_rows) {
    auto agent = std::make_unique<AgentState>();
    agent->row = std::move(row);
    agent->row.state = v1::AGENT_DISCONNECTED;
    agent->row.last_seen_ms = now;
    agent->free = agent->row.resources;
    agent->gpu_busy.assign(static_cast<size_t>(agent->row.resources.gpus()), false);
    agents_.Add(std::move(agent));
  }
  RETURN_IF_ERROR(LoadDrains());
  RETURN_IF_ERROR(LoadReservations());
  RETURN_IF_ERROR(ApplyConfigBudgets());  // --budget's, where none is stored
  RETURN_IF_ERROR(LoadScopeBudgets());    // before the runs: what pauses them
  ASSIGN_OR_RETURN(auto runs, store_->LoadActiveRuns());
  for (const auto& run_row : runs) {
    Result<RunState*> loaded = LoadRunIntoMemory(run_row.id);
    if (!loaded.ok()) {
      GetLogger("scheduler")
          ->error("run {}: cannot recover: {}", run_row.id, ToStd(loaded.status().message()));
    }
  }
  RecoverScopeUse();
  RecoverPreemptions();
  for (auto& [id, agent] : agents_) {
    if (!agent->attempts.empty()) ArmAgentTimers(agent.get());
  }
  RETURN_IF_ERROR(LoadStoredQuotas());  // `longhaul quota`'s over --quota's
  RETURN_IF_ERROR(LoadUsage());         // quotas and fair share: from the stored attempts
  GetLogger("scheduler")
      ->info("recovered {} active run(s), {} live attempt(s), {} agent(s)", runs_.size(),
             runs_.live_attempts().size(), agents_.size());
  return OkStatus();
}

Result<RunState*> Scheduler::LoadRunIntoMemory(int64_t run_id) {
  if (RunState* in_memory = runs_.Find(run_id)) return in_memory;
  ASSIGN_OR_RETURN(store::RunRow row, store_->LoadRun(run_id));
  ASSIGN_OR_RETURN(auto stages, store_->LoadStages(run_id));
  ASSIGN_OR_RETURN(auto attempts, store_->LoadAttempts(run_id));
  auto run = std::make_unique<RunState>();
  run->row = std::move(row);
  Result<workflow::Workflow> wf =
      workflow::ParseWorkflow(run->row.workflow_text, run->row.workflow_path);
  if (!wf.ok()) {
    return Annotate(wf.status(), StrCat("run ", run_id, ": its stored workflow no longer parses"));
  }
  run->workflow = std::move(*wf);
  std::string().swap(run->row.workflow_text);  // parsed: the store keeps the text
  if (!run->workflow.tag_uses.empty()) {
    ASSIGN_OR_RETURN(std::vector<store::TagUseRow> uses, store_->LoadTagUses(run_id));
    for (store::TagUseRow& u : uses) run->tag_values[u.key] = std::move(u.value);
  }
  RunState* raw = runs_.Add(std::move(run));
  Status built = BuildRunState(raw, std::move(stages), std::move(attempts));
  if (!built.ok()) {
    std::erase(batch_.dirty_totals, raw);
    runs_.Remove(run_id);
    return built;
  }
  return raw;
}

Status Scheduler::BuildRunState(RunState* run, std::vector<store::StageRow> stage_rows,
                                std::vector<store::AttemptRow> attempt_rows) {
  std::map<std::string, store::StageRow> by_name;
  for (auto& s : stage_rows) by_name[s.name] = std::move(s);
  int64_t now = clock_->NowMs();
  for (size_t i = 0; i < run->workflow.stages.size(); ++i) {
    const workflow::StageSpec& spec = run->workflow.stages[i];
    auto found = by_name.find(spec.name);
    if (found == by_name.end()) {
      return absl::DataLossError(
          StrCat("run ", run->row.id, ": stage '", spec.name, "' is missing from the store"));
    }
    auto st = std::make_unique<StageState>();
    st->row = std::move(found->second);
    DropStaticColumns(&st->row);
    st->spec = &spec;
    st->run = run;
    st->index = static_cast<int>(i);
    if (st->row.cached_from_stage_id) {
      // Only for snapshots: a source that cannot be read leaves them without it.
      if (Result<store::StageRow> src = store_->LoadStageById(*st->row.cached_from_stage_id);
          src.ok()) {
        st->Extras().cached_from_run_id = src->run_id;
        st->Extras().cached_from_stage = src->name;
      }
    }
    runs_.IndexStage(*st);
    run->stages.push_back(std::move(st));
  }
  run->LinkStages();
  std::map<int64_t, StageState*> by_id;
  for (auto& st : run->stages) by_id[st->row.id] = st.get();
  for (auto& row : attempt_rows) {
    auto sit = by_id.find(row.stage_id);
    if (sit == by_id.end()) continue;
    StageState* stage = sit->second;
    if (IsTerminal(row.state)) {
      // Ended: its row is stored; only its wall time and node matter here.
      if (stage->spec->resume) stage->Extras().previous_agent = row.agent_id;
      if (row.started_at_ms) {
        int64_t end = row.ended_at_ms.value_or(*row.started_at_ms);
        int64_t wall_ms = std::max<int64_t>(0, end - *row.started_at_ms);
        stage->ended_wall_ms += wall_ms;
        run->gpu.ended_ms += wall_ms * stage->row.resources.gpus();
      }
      continue;
    }
    auto a = std::make_unique<AttemptState>();
    a->row = std::move(row);
    a->stage = stage;
    a->counted = GpuUseOf(*a);
    run->gpu.ended_ms += a->counted.ended_ms;
    run->gpu.running += a->counted.running;
    run->gpu.start_ms += a->counted.start_ms;
    if (stage->spec->resume) stage->Extras().previous_agent = a->row.agent_id;
    if (!IsTerminal(a->row.state)) {
      // A stop asked before the restart: it ends as asked (its kind and reason), and is not
      // chosen or stopped again for another reason meanwhile.
      a->kill_reason = a->row.stop_kind;
      a->kill_detail = a->row.stop_reason;
      a->held = stage->row.resources;
      v1::StartAttempt start;
      if (start.ParseFromString(a->row.start_blob)) {
        a->gpus.assign(start.gpus().begin(), start.gpus().end());
      }
      a->last_progress_ms = now;
      stage->current = a.get();
      runs_.AddLiveAttempt(a.get());
      if (AgentState* agent = agents_.Find(a->row.agent_id)) {
        agent->attempts.insert(a->row.id);
        SubtractResources(&agent->free, a->held);
        for (int g : a->gpus) {
          if (g >= 0 && g < static_cast<int>(agent->gpu_busy.size())) agent->gpu_busy[g] = true;
        }
        a->holds_resources = true;
      }
    }
    stage->attempts.push_back(std::move(a));
  }
  CountStages(run);
  for (auto& st : run->stages) {
    if (st->current) ArmAttemptTimers(st->current);
    switch (st->row.status) {
      case v1::STAGE_READY:
        AssignSharePos(run);
        ready_.Add(ReadyEntryOf(st.get()), st->row.resources, PlacementKey(st.get()));
        break;
      case v1::STAGE_WAITING:
        if (st->row.next_retry_at_ms) {
          timers_.Push(
              {*st->row.next_retry_at_ms, TimerKind::kRetry, st->row.id, "", st->retry_gen});
        } else {
          MaybeReady(st.get());
        }
        break;
      case v1::STAGE_RUNNING:
      case v1::STAGE_STARTING:
      case v1::STAGE_SERVING:
        if (st->current == nullptr) {
          // The coordinator died between deciding to run the stage and recording an attempt.
          SetStageStatus(st.get(), v1::STAGE_WAITING, "");
          MaybeReady(st.get());
        }
        break;
      default:
        break;
    }
  }
  CheckBudget(run);  // a run its budget paused stays paused; its timer is armed again
  return OkStatus();
}

}  // namespace longhaul::scheduler

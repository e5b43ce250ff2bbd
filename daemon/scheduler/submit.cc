// Submitting a run: store the workflow text, the run and its stages, and make the roots ready.
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/planner.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/proto_convert.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {
namespace {

v1::Resources ToResources(const workflow::ResourceRequest& r) {
  v1::Resources out;
  out.set_cpus(r.cpus);
  out.set_memory_bytes(r.memory_bytes);
  out.set_gpus(r.gpus);
  return out;
}

}  // namespace

Result<SubmitOutput> Scheduler::Submit(SubmitInput input, std::optional<RunPlan> given) {
  RunPlan plan;
  if (given) {
    plan = std::move(*given);
  } else {
    ASSIGN_OR_RETURN(plan, PlanRun(store_, input));
    FinalizePlan(input.workflow, &plan);
  }
  RETURN_IF_ERROR(CheckStagesFit(input.workflow, plan));
  int64_t now = clock_->NowMs();
  SubmitOutput out;
  if (input.dry_run) return out;

  RETURN_IF_ERROR(store_->Savepoint("submit"));
  Result<std::unique_ptr<RunState>> made = CreateRun(std::move(input), plan, now);
  if (!made.ok()) {
    store_->RollbackToSavepoint("submit");
    return made.status();
  }
  std::unique_ptr<RunState> run = std::move(*made);
  RunState* r = run.get();
  // Readiness first, then one INSERT per stage with the status it gave: the roots of a wide run
  // are not inserted as waiting and updated to ready in the same batch.
  CountStages(r);
  for (auto& st : r->stages) MaybeReady(st.get());
  MaybeFinishRun(r);  // a workflow whose stages are all reused ends at once
  Status inserted = InsertStages(r, &plan);
  if (inserted.ok()) inserted = store_->ReleaseSavepoint("submit");
  if (!inserted.ok()) {
    ForgetNewRun(r);
    store_->RollbackToSavepoint("submit");
    return inserted;
  }
  int64_t run_id = r->row.id;
  runs_.Add(std::move(run));
  batch_.changed_runs.insert(run_id);
  GetLogger("scheduler")
      ->info("run {} submitted: {} ({} stages)", run_id, r->row.workflow_name, r->stages.size());
  store::RunRowToProto(r->row, &out.run);
  out.run.set_description(r->workflow.description);
  for (int st = 0; st < v1::StageStatus_ARRAYSIZE; ++st) {
    if (r->status_count[st] == 0) continue;
    (*out.run
          .mutable_stage_counts())[std::string(StageStatusName(static_cast<v1::StageStatus>(st)))] =
        static_cast<int32_t>(r->status_count[st]);
  }
  return out;
}

Status Scheduler::InsertStages(RunState* r, RunPlan* plan) {
  for (auto& st : r->stages) {
    workflow::StageFingerprint& fp = plan->stages[static_cast<size_t>(st->index)].fingerprint;
    st->row.fingerprint_json = workflow::FingerprintJsonText(fp);
    fp = {};
    RETURN_IF_ERROR(store_->InsertStage(&st->row));
    if (std::optional<int64_t> from = plan->stages[static_cast<size_t>(st->index)].judged_from) {
      RETURN_IF_ERROR(store_->PutJudgedFrom(st->row.id, *from));
    }
    st->dirty = false;  // just written as it is
    DropStaticColumns(&st->row);
  }
  plan->stages = {};
  std::erase_if(batch_.dirty_stages, [r](const StageState* s) { return s->run == r; });
  return OkStatus();
}

void Scheduler::ForgetNewRun(RunState* r) {
  for (auto& st : r->stages) {
    if (st->row.status == v1::STAGE_READY) {
      ready_.Remove(ReadyEntryOf(st.get()), st->row.resources, PlacementKey(st.get()));
    }
  }
  std::erase_if(batch_.dirty_stages, [r](const StageState* s) { return s->run == r; });
  std::erase(batch_.dirty_runs, r);
  std::erase(batch_.dirty_totals, r);
  batch_.changed_runs.erase(r->row.id);
  batch_.ended_runs.erase(r->row.id);
}

Result<std::unique_ptr<RunState>> Scheduler::CreateRun(SubmitInput input, const RunPlan& plan,
                                                       int64_t now) {
  auto run = std::make_unique<RunState>();
  RunState* r = run.get();
  ASSIGN_OR_RETURN(r->row.workflow_id,
                   store_->PutWorkflow(input.workflow.name, input.text, input.hash, now));
  r->row.workflow_name = input.workflow.name;
  r->row.workflow_path = input.path;
  // The text stays in the store (workflows); the run in memory keeps only its parse.
  r->row.status = v1::RUN_RUNNING;
  r->row.params = plan.params;
  r->row.overrides = input.overrides;
  r->row.parent_run_id = input.parent_run_id;
  r->row.from_stage = input.from_stage;
  r->row.no_cache = input.no_cache;
  r->row.created_at_ms = now;
  r->row.started_at_ms = now;
  r->row.description = input.workflow.description;
  r->row.user = input.user;
  r->row.team = input.team;
  if (!input.priority.empty()) r->row.priority = input.priority;
  r->row.budget_gpu_hours = input.budget.gpu_hours;
  r->row.budget_hard = input.budget.hard;
  RETURN_IF_ERROR(store_->InsertRun(&r->row));
  if (!input.source.kind().empty()) {
    RETURN_IF_ERROR(store_->PutRunSourceState(r->row.id, input.source));
  }
  if (!plan.tags.uses.empty()) {
    RETURN_IF_ERROR(store_->PutTagUses(r->row.id, plan.tags.uses));
    r->tag_values = plan.tags.bindings.values;
  }
  r->workflow = std::move(input.workflow);

  for (size_t i = 0; i < r->workflow.stages.size(); ++i) {
    const workflow::StageSpec& spec = r->workflow.stages[i];
    auto st = std::make_unique<StageState>();
    st->spec = &spec;
    st->run = r;
    st->index = static_cast<int>(i);
    st->row.run_id = r->row.id;
    st->row.name = spec.name;
    st->row.position = static_cast<int>(i);
    st->row.kind = spec.kind == workflow::StageKind::kService ? "service" : "task";
    st->row.status = v1::STAGE_WAITING;
    st->row.needs = spec.needs;
    st->row.resources = ToResources(spec.resources);
    const StagePlan& sp = plan.stages[i];
    st->row.cache_key = sp.fingerprint.key;
    st->row.plan_action = sp.action;
    st->row.plan_reason = sp.reason;
    st->row.description = spec.description;
    if (sp.action == "reuse" && sp.hit) {
      st->row.status = v1::STAGE_CACHED;
      st->row.cached_from_stage_id = sp.hit->stage_id;
      st->Extras().cached_from_run_id = sp.hit->run_id;
      st->Extras().cached_from_stage = sp.hit->stage_name;
      st->row.outputs = sp.hit->outputs;
      st->row.ended_at_ms = now;
      // Its node is where the reused artifacts are (they were checked there), so that the
      // stages that need it are placed there as after a stage that ran (PickAgent's locality).
      if (!sp.hit->artifacts.empty()) st->row.agent_id = sp.hit->artifacts.front().agent_id;
    } else if (sp.action == "stop") {  // a changed early_stop rule stops it (sweep_rejudge.h)
      st->row.status = v1::STAGE_STOPPED_EARLY;
      st->row.reason = sp.reason;
      st->row.ended_at_ms = now;
    } else if (sp.action == "skip") {
      st->row.status = v1::STAGE_STOPPED;
      st->row.reason = sp.reason;
      st->row.ended_at_ms = now;
    }
    r->stages.push_back(std::move(st));
  }
  r->LinkStages();
  return run;
}

void RunState::LinkStages() {
  by_name.resize(stages.size());
  for (size_t i = 0; i < stages.size(); ++i) by_name[i] = static_cast<int>(i);
  std::sort(by_name.begin(), by_name.end(),
            [this](int a, int b) { return stages[a]->spec->name < stages[b]->spec->name; });
  for (auto& st : stages) {
    for (const auto& need : st->spec->needs) {
      // Validation made every need a stage of the workflow.
      StageState* d = Find(need);
      st->deps.push_back(d->index);
      d->dependents.push_back(st->index);
    }
  }
}

}  // namespace longhaul::scheduler

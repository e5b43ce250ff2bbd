#include "daemon/rpc/client_api.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#include "core/hash.h"
#include "core/log_read.h"
#include "core/strings.h"
#include "daemon/rpc/early_stop_saving.h"
#include "daemon/scheduler/planner.h"
#include "daemon/workflow/template.h"
#include "daemon/workflow/workflow.h"
#include "proto/state_names.h"

namespace longhaul::rpc {

namespace {

constexpr int kDefaultPlanLimit = 1'000;
constexpr int kMaxPlanLimit = 20'000;

}  // namespace

Result<v1::SubmitRunResponse> ClientApi::SubmitRun(const v1::SubmitRunRequest& req) {
  if (req.dry_run() || req.submission_id().empty()) return SubmitOnce(req);
  return submissions_.Once(req.submission_id(), [&] { return SubmitOnce(req); });
}

Result<v1::SubmitRunResponse> ClientApi::PivotRun(const v1::PivotRunRequest& req) {
  if (req.dry_run() || req.submission_id().empty()) return PivotOnce(req);
  return submissions_.Once(req.submission_id(), [&] { return PivotOnce(req); });
}

Result<v1::SubmitRunResponse> ClientApi::SubmitOnce(const v1::SubmitRunRequest& req) {
  std::string path = req.workflow_path().empty() ? "<submitted>" : req.workflow_path();
  // Parsing and validation happen here, off the loop: a broken file is refused before
  // anything is stored.
  ASSIGN_OR_RETURN(workflow::Workflow wf, workflow::ParseWorkflow(req.workflow_text(), path));
  std::map<std::string, std::string> overrides(req.params().begin(), req.params().end());
  RETURN_IF_ERROR(workflow::ResolveParams(wf, overrides).status());

  auto input = std::make_shared<scheduler::SubmitInput>();
  input->workflow = std::move(wf);
  input->text = req.workflow_text();
  input->path = path;
  input->hash = Sha256Hex(req.workflow_text());
  input->overrides = std::move(overrides);
  input->dry_run = req.dry_run();
  input->no_cache = req.no_cache();
  if (req.parent_run_id() > 0) input->parent_run_id = req.parent_run_id();
  input->from_stage = req.from_stage();
  input->source = req.source();
  RETURN_IF_ERROR(ApplyRunPolicy(req.submitter(), req.priority(), req.budget_gpu_hours(),
                                 req.budget_hard(), input.get()));
  return PlanAndSubmit(std::move(input), req.plan_page());
}

v1::Submitter SubmitterOf(const auth::Principal& who) {
  v1::Submitter out;
  out.set_user(who.name);
  out.set_team(who.team);
  out.set_role(std::string(auth::RoleName(who.role)));
  return out;
}

Status ClientApi::ApplyRunPolicy(const v1::Submitter& caller, const std::string& requested,
                                 double gpu_hours, bool hard, scheduler::SubmitInput* input) const {
  v1::Submitter who = caller;
  if (auto team = teams_.find(who.user()); who.team().empty() && team != teams_.end()) {
    who.set_team(team->second);  // the config's team, for a token without one
  }
  ASSIGN_OR_RETURN(input->priority, priority_.Resolve(requested, input->workflow.priority, who));
  input->user = who.user();
  input->team = who.team();
  input->budget = input->workflow.budget;
  if (gpu_hours < 0 || !std::isfinite(gpu_hours)) {
    return absl::InvalidArgumentError(StrCat("--budget: expected GPU-hours > 0, got ", gpu_hours));
  }
  if (gpu_hours > 0) input->budget = {gpu_hours, hard};
  return OkStatus();
}

Result<v1::Run> ClientApi::SetRunBudget(const v1::SetRunBudgetRequest& req) {
  return loop_->Call<v1::Run>(
      [this, req] { return scheduler_->SetRunBudget(req.run_id(), req.gpu_hours(), req.by()); });
}

Result<v1::ScopeBudget> ClientApi::SetBudget(const v1::SetBudgetRequest& req) {
  return loop_->Call<v1::ScopeBudget>([this, req] { return scheduler_->SetScopeBudget(req); });
}

Result<v1::ListBudgetsResponse> ClientApi::ListBudgets(const v1::ListBudgetsRequest&) {
  ASSIGN_OR_RETURN(
      std::vector<v1::ScopeBudget> budgets,
      loop_->Call<std::vector<v1::ScopeBudget>>([this]() -> Result<std::vector<v1::ScopeBudget>> {
        return scheduler_->ListScopeBudgets();
      }));
  v1::ListBudgetsResponse resp;
  for (auto& b : budgets) *resp.add_budgets() = std::move(b);
  return resp;
}

Result<v1::ScopeBudget> ClientApi::RemoveBudget(const v1::RemoveBudgetRequest& req) {
  return loop_->Call<v1::ScopeBudget>([this, req] { return scheduler_->RemoveScopeBudget(req); });
}

Result<v1::Quota> ClientApi::SetQuota(const v1::SetQuotaRequest& req) {
  return loop_->Call<v1::Quota>([this, req] { return scheduler_->SetQuota(req); });
}

Result<v1::Quota> ClientApi::RemoveQuota(const v1::RemoveQuotaRequest& req) {
  return loop_->Call<v1::Quota>([this, req] { return scheduler_->RemoveQuota(req); });
}

Result<v1::ListQuotasResponse> ClientApi::ListQuotas(const v1::ListQuotasRequest&) {
  return loop_->Call<v1::ListQuotasResponse>(
      [this]() -> Result<v1::ListQuotasResponse> { return scheduler_->ListQuotas(); });
}

Result<v1::SubmitRunResponse> ClientApi::PivotOnce(const v1::PivotRunRequest& req) {
  ASSIGN_OR_RETURN(store::SqliteStore::RunSource src, store_->GetRunSource(req.run_id()));
  Result<workflow::Workflow> wf = workflow::ParseWorkflow(src.workflow_text, src.workflow_path);
  if (!wf.ok()) return Annotate(wf.status(), StrCat("run ", req.run_id(), "'s workflow"));
  auto input = std::make_shared<scheduler::SubmitInput>();
  input->overrides = src.overrides;  // the earlier run's --set values, then the pivot's
  for (const auto& [k, v] : req.params()) input->overrides[k] = v;
  RETURN_IF_ERROR(workflow::ResolveParams(*wf, input->overrides).status());
  input->workflow = std::move(*wf);
  input->text = src.workflow_text;
  input->path = src.workflow_path;
  input->hash = Sha256Hex(src.workflow_text);
  input->dry_run = req.dry_run();
  input->no_cache = req.no_cache();
  input->parent_run_id = req.run_id();
  input->from_stage = req.from_stage();
  // The text is the parent's, so the repository it came from is the parent's too.
  ASSIGN_OR_RETURN(input->source, store_->GetRunSourceState(req.run_id()));
  // A pivot keeps its parent's class unless the caller may not use it.
  RETURN_IF_ERROR(ApplyRunPolicy(req.submitter(), src.priority, 0, false, input.get()));
  return PlanAndSubmit(std::move(input), req.plan_page());
}

Result<v1::SubmitRunResponse> ClientApi::PlanAndSubmit(
    std::shared_ptr<scheduler::SubmitInput> input, const v1::PlanPage& page) {
  if (!input->workflow.notify.command.empty() && !notify_.allow_commands) {
    return absl::FailedPreconditionError(
        StrCat(input->path,
               ": notify.command would run on longhauld's host as its user; longhauld "
               "allows that only with --notify-allow-commands (a webhook needs nothing)"));
  }
  ASSIGN_OR_RETURN(scheduler::RunPlan plan, scheduler::PlanRun(store_, *input));
  CheckReusedArtifacts(&plan);
  scheduler::FinalizePlan(input->workflow, &plan);

  // The summary covers every stage; the entries only the page asked for, so the answer stays
  // small however big the run.
  v1::SubmitRunResponse resp;
  resp.set_workflow_name(input->workflow.name);
  for (const workflow::ParamSpec& p : input->workflow.params) {
    v1::DeclaredParam* d = resp.add_declared_params();
    d->set_name(p.name);
    d->set_default_value(p.default_value);
    d->set_line(p.pos.line);
  }
  for (const store::TagUseRow& u : plan.tags.uses) *resp.add_tag_uses() = TagUseRowToProto(u);
  v1::PlanSummary* summary = resp.mutable_plan_summary();
  size_t n = plan.stages.size();
  size_t offset = std::min<size_t>(std::max(page.offset(), 0), n);
  int limit = page.limit() == 0 ? kDefaultPlanLimit : std::clamp(page.limit(), 0, kMaxPlanLimit);
  size_t end = std::min(n, offset + static_cast<size_t>(limit));
  summary->set_stages(static_cast<int32_t>(n));
  summary->set_offset(static_cast<int32_t>(offset));
  for (size_t i = 0; i < n; ++i) {
    const scheduler::StagePlan& sp = plan.stages[i];
    ++(*summary->mutable_actions())[sp.action];
    bool in_page = i >= offset && i < end;
    v1::PlanEntry* e = in_page ? resp.add_plan() : nullptr;
    if (e) *e = scheduler::PlanEntryOf(sp);
    if (sp.action != "reuse" || !sp.hit) continue;
    // What reusing saves: the reused stage's own recorded attempts.
    Result<store::SqliteStore::StageCost> cost =
        store_->GetStageCost(sp.hit->run_id, sp.hit->stage_name);
    if (!cost.ok()) continue;
    summary->set_saved_wall_seconds(summary->saved_wall_seconds() + cost->wall_seconds);
    summary->set_saved_gpu_hours(summary->saved_gpu_hours() + cost->gpu_hours);
    if (e) {
      e->set_saved_wall_seconds(cost->wall_seconds);
      e->set_saved_gpu_hours(cost->gpu_hours);
    }
  }
  ASSIGN_OR_RETURN(std::optional<v1::EarlyStopSaving> stopping,
                   EarlyStopSavingOfPlan(store_, input->workflow, plan));
  if (stopping) *summary->mutable_early_stop_saving() = std::move(*stopping);
  if (input->dry_run) return resp;  // nothing to store: the loop is not needed

  auto shared_plan = std::make_shared<scheduler::RunPlan>(std::move(plan));
  ASSIGN_OR_RETURN(scheduler::SubmitOutput out,
                   loop_->Call<scheduler::SubmitOutput>([this, input, shared_plan]() {
                     return scheduler_->Submit(std::move(*input), std::move(*shared_plan));
                   }));
  if (out.run.id() != 0) *resp.mutable_run() = std::move(out.run);
  // The parse and the plan of the workflow were freed just now.
  if (memory_ != nullptr) memory_->AfterSubmit(n);
  return resp;
}

void ClientApi::CheckReusedArtifacts(scheduler::RunPlan* plan) {
  for (size_t i = 0; i < plan->stages.size(); ++i) {
    scheduler::StagePlan& sp = plan->stages[i];
    if (sp.action != "reuse" || !sp.hit || sp.hit->artifacts.empty()) continue;
    std::map<std::string, std::vector<const store::ArtifactRow*>> by_agent;
    for (const auto& a : sp.hit->artifacts) by_agent[a.agent_id].push_back(&a);
    for (const auto& [agent, arts] : by_agent) {
      std::vector<std::string> paths;
      for (const auto* a : arts) paths.push_back(a->path);
      auto promise = std::make_shared<std::promise<Result<std::vector<std::string>>>>();
      auto future = promise->get_future();
      loop_->Post([this, agent = agent, paths, promise] {
        scheduler_->CheckArtifacts(agent, paths, [promise](Result<std::vector<std::string>> r) {
          promise->set_value(std::move(r));
        });
      });
      int64_t run_id = sp.hit->run_id;
      if (future.wait_for(std::chrono::milliseconds(log_timeout_ms_)) !=
          std::future_status::ready) {
        scheduler::RerunStage(plan, i,
                              StrCat("cannot check the artifacts of run ", run_id, ": agent ",
                                     agent, " did not answer"));
        break;
      }
      Result<std::vector<std::string>> missing = future.get();
      if (!missing.ok()) {
        scheduler::RerunStage(plan, i,
                              StrCat("the artifacts of run ", run_id, " are on agent ", agent,
                                     ", which is not connected"));
        break;
      }
      if (!missing->empty()) {
        std::string name;
        for (const auto* a : arts) {
          if (a->path == missing->front()) name = a->name;
        }
        scheduler::RerunStage(plan, i,
                              StrCat("artifact '", name, "' of run ", run_id,
                                     " is gone: ", missing->front(), " (on ", agent, ")"));
        break;
      }
    }
  }
}

Result<v1::Run> ClientApi::GetRun(const v1::GetRunRequest& req) {
  ASSIGN_OR_RETURN(v1::Run run, store_->GetRun(req));
  ASSIGN_OR_RETURN(std::optional<v1::EarlyStopSaving> saving, EarlyStopSavingOfRun(store_, run));
  if (saving) *run.mutable_early_stop_saving() = std::move(*saving);
  RETURN_IF_ERROR(AddRunTags(&run));
  return run;
}

Result<v1::ListStagesResponse> ClientApi::ListStages(const v1::ListStagesRequest& req) {
  return store_->ListStages(req);
}

Result<v1::ListRunsResponse> ClientApi::ListRuns(const v1::ListRunsRequest& req) {
  ASSIGN_OR_RETURN(v1::ListRunsResponse resp, store_->ListRuns(req));
  RETURN_IF_ERROR(AddListedRunTags(&resp));
  return resp;
}

Result<v1::Run> ClientApi::CancelRun(const v1::CancelRunRequest& req) {
  int64_t id = req.id();
  return loop_->Call<v1::Run>([this, id] { return scheduler_->Cancel(id); });
}

Result<v1::Run> ClientApi::RetryStage(const v1::RetryStageRequest& req) {
  int64_t id = req.run_id();
  std::string stage = req.stage();
  return loop_->Call<v1::Run>([this, id, stage] { return scheduler_->Retry(id, stage); });
}

Status ClientApi::Watch(int64_t id, std::shared_ptr<scheduler::Watcher> watcher) {
  return loop_
      ->Call<bool>([this, id, watcher]() -> Result<bool> {
        RETURN_IF_ERROR(scheduler_->Watch(id, watcher));
        return true;
      })
      .status();
}

Result<v1::DrainGpuResponse> ClientApi::DrainGpu(const v1::DrainGpuRequest& req) {
  if (req.agent_id().empty()) return absl::InvalidArgumentError("no agent given");
  ASSIGN_OR_RETURN(auto gpus, loop_->Call<std::vector<v1::GpuInfo>>([this, req] {
    return scheduler_->SetGpuService(req.agent_id(), req.gpu(), !req.undrain(), req.reason(),
                                     req.by());
  }));
  v1::DrainGpuResponse resp;
  for (v1::GpuInfo& g : gpus) *resp.add_gpus() = std::move(g);
  return resp;
}

Result<v1::DrainAgentResponse> ClientApi::DrainAgent(const v1::DrainAgentRequest& req) {
  if (req.agent_id().empty()) return absl::InvalidArgumentError("no agent given");
  ASSIGN_OR_RETURN(v1::AgentInfo agent, loop_->Call<v1::AgentInfo>([this, req] {
    return scheduler_->SetAgentDrain(req.agent_id(), req.at_ms(), req.undrain(), req.reason(),
                                     req.by());
  }));
  v1::DrainAgentResponse resp;
  *resp.mutable_agent() = std::move(agent);
  return resp;
}

Result<v1::Reservation> ClientApi::Reserve(const v1::ReserveRequest& req) {
  if (req.agent_id().empty()) return absl::InvalidArgumentError("no agent given");
  return loop_->Call<v1::Reservation>([this, req] { return scheduler_->Reserve(req); });
}

Result<v1::Reservation> ClientApi::Unreserve(const v1::UnreserveRequest& req) {
  if (req.id() <= 0) return absl::InvalidArgumentError("no reservation id given");
  return loop_->Call<v1::Reservation>(
      [this, req] { return scheduler_->Unreserve(req.id(), req.reason(), req.by()); });
}

Result<v1::ListReservationsResponse> ClientApi::ListReservations(
    const v1::ListReservationsRequest& req) {
  ASSIGN_OR_RETURN(std::vector<v1::Reservation> rows,
                   loop_->Call<std::vector<v1::Reservation>>(
                       [this, req] { return scheduler_->ListReservations(req.all()); }));
  v1::ListReservationsResponse resp;
  for (v1::Reservation& r : rows) *resp.add_reservations() = std::move(r);
  return resp;
}

Result<v1::ListAgentsResponse> ClientApi::ListAgents() {
  ASSIGN_OR_RETURN(
      std::vector<v1::AgentInfo> agents,
      loop_->Call<std::vector<v1::AgentInfo>>(
          [this]() -> Result<std::vector<v1::AgentInfo>> { return scheduler_->ListAgents(); }));
  v1::ListAgentsResponse resp;
  for (auto& a : agents) *resp.add_agents() = std::move(a);
  return resp;
}

Result<v1::ReadLogResponse> ClientApi::ReadLog(const v1::ReadLogRequest& request) {
  if (!request.stream().empty() && request.stream() != "stdout" && request.stream() != "stderr") {
    return absl::InvalidArgumentError("stream must be 'stdout' or 'stderr', not '" +
                                      request.stream() + "'");
  }
  // Logs are found by run, stage and attempt in the store, never by a path; a name that no
  // workflow could have is refused before any lookup.
  if (!workflow::IsTemplateName(request.stage())) {
    return absl::InvalidArgumentError(
        StrCat("'", request.stage(),
               "' is not a stage name (a letter or _ then letters, digits, _ or -)"));
  }
  v1::ReadLogRequest req = request;
  req.set_max_bytes(static_cast<int32_t>(ClampLogReadBytes(req.max_bytes())));
  ASSIGN_OR_RETURN(store::AttemptRow row,
                   store_->FindAttempt(req.run_id(), req.stage(), req.attempt()));
  auto promise = std::make_shared<std::promise<Result<v1::LogData>>>();
  std::future<Result<v1::LogData>> future = promise->get_future();
  loop_->Post([this, row, request = req, promise] {
    scheduler_->ReadLog(row, request,
                        [promise](Result<v1::LogData> data) { promise->set_value(data); });
  });
  if (future.wait_for(std::chrono::milliseconds(log_timeout_ms_)) != std::future_status::ready) {
    return absl::DeadlineExceededError("agent " + row.agent_id +
                                       " did not answer the log request in time");
  }
  ASSIGN_OR_RETURN(v1::LogData data, future.get());
  v1::ReadLogResponse resp;
  resp.set_data(data.data());
  resp.set_offset(data.offset());
  resp.set_next_offset(data.offset() + static_cast<int64_t>(data.data().size()));
  resp.set_attempt(row.number);
  resp.set_attempt_id(row.id);
  // Whether the attempt has ended now (the row read above may predate its end).
  Result<store::AttemptRow> now = store_->FindAttempt(req.run_id(), req.stage(), row.number);
  bool ended = now.ok() && IsTerminal(now->state);
  resp.set_finished(ended && resp.next_offset() >= data.size());
  return resp;
}

Result<v1::ListEventsResponse> ClientApi::ListEvents(const v1::ListEventsRequest& req) {
  return store_->ListEvents(req);
}

Result<v1::ListAttemptsResponse> ClientApi::ListAttempts(const v1::ListAttemptsRequest& req) {
  v1::ListStagesRequest one;
  one.set_run_id(req.run_id());
  one.add_names(req.stage());
  one.set_include_attempts(true);
  ASSIGN_OR_RETURN(v1::ListStagesResponse found, store_->ListStages(one));
  if (found.stages_size() == 1) {
    v1::ListAttemptsResponse resp;
    resp.mutable_attempts()->Swap(found.mutable_stages(0)->mutable_attempts());
    return resp;
  }
  return absl::NotFoundError(StrCat("run ", req.run_id(), " has no stage '", req.stage(), "'"));
}

Result<v1::ListMetricsResponse> ClientApi::ListMetrics(const v1::ListMetricsRequest& req) {
  return store_->ListMetrics(req);
}

}  // namespace longhaul::rpc

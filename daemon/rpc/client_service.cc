#include "daemon/rpc/client_service.h"

#include <chrono>
#include <future>

#include "core/hash.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/planner.h"
#include "daemon/rpc/call_auth.h"
#include "daemon/rpc/client_audit.h"
#include "daemon/rpc/status_util.h"
#include "daemon/workflow/workflow.h"
#include "proto/state_names.h"

namespace longhaul::rpc {

template <typename Request, typename Response>
grpc::Status ClientServiceImpl::Mutate(grpc::ServerContext* ctx, auth::Action action,
                                       const Request* req, Response* resp,
                                       grpc::Status (ClientServiceImpl::*fn)(const Request*,
                                                                            Response*)) {
  auto principal = CheckCall(*authorizer_, ctx, action);
  if (!principal.ok()) return ToGrpc(principal.status());
  grpc::Status status = (this->*fn)(req, resp);
  Audit(*principal, action, DescribeForAudit(*req, *resp), status);
  return status;
}

grpc::Status ClientServiceImpl::SubmitRun(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req,
                                          v1::SubmitRunResponse* resp) {
  return Mutate(ctx, auth::Action::kSubmitRun, req, resp, &ClientServiceImpl::DoSubmitRun);
}

grpc::Status ClientServiceImpl::DoSubmitRun(const v1::SubmitRunRequest* req,
                                            v1::SubmitRunResponse* resp) {
  std::string path = req->workflow_path().empty() ? "<submitted>" : req->workflow_path();
  // Parsing and validation happen here, off the loop: a broken file is refused before
  // anything is stored.
  Result<workflow::Workflow> wf = workflow::ParseWorkflow(req->workflow_text(), path);
  if (!wf.ok()) return ToGrpc(wf.status());
  std::map<std::string, std::string> overrides(req->params().begin(), req->params().end());
  Result<std::map<std::string, std::string>> params = workflow::ResolveParams(*wf, overrides);
  if (!params.ok()) return ToGrpc(params.status());

  auto input = std::make_shared<scheduler::SubmitInput>();
  input->workflow = std::move(*wf);
  input->text = req->workflow_text();
  input->path = path;
  input->hash = Sha256Hex(req->workflow_text());
  input->overrides = std::move(overrides);
  input->dry_run = req->dry_run();
  input->no_cache = req->no_cache();
  if (req->parent_run_id() > 0) input->parent_run_id = req->parent_run_id();
  input->from_stage = req->from_stage();
  return PlanAndSubmit(std::move(input), resp);
}

grpc::Status ClientServiceImpl::PivotRun(grpc::ServerContext* ctx, const v1::PivotRunRequest* req,
                                         v1::SubmitRunResponse* resp) {
  return Mutate(ctx, auth::Action::kPivotRun, req, resp, &ClientServiceImpl::DoPivotRun);
}

grpc::Status ClientServiceImpl::DoPivotRun(const v1::PivotRunRequest* req,
                                           v1::SubmitRunResponse* resp) {
  Result<store::SqliteStore::RunSource> src = store_->GetRunSource(req->run_id());
  if (!src.ok()) return ToGrpc(src.status());
  Result<workflow::Workflow> wf = workflow::ParseWorkflow(src->workflow_text, src->workflow_path);
  if (!wf.ok()) {
    return ToGrpc(Annotate(wf.status(), StrCat("run ", req->run_id(), "'s workflow")));
  }
  auto input = std::make_shared<scheduler::SubmitInput>();
  input->overrides = src->overrides;  // the earlier run's --set values, then the pivot's
  for (const auto& [k, v] : req->params()) input->overrides[k] = v;
  Result<std::map<std::string, std::string>> params =
      workflow::ResolveParams(*wf, input->overrides);
  if (!params.ok()) return ToGrpc(params.status());
  input->workflow = std::move(*wf);
  input->text = src->workflow_text;
  input->path = src->workflow_path;
  input->hash = Sha256Hex(src->workflow_text);
  input->dry_run = req->dry_run();
  input->no_cache = req->no_cache();
  input->parent_run_id = req->run_id();
  input->from_stage = req->from_stage();
  return PlanAndSubmit(std::move(input), resp);
}

grpc::Status ClientServiceImpl::PlanAndSubmit(std::shared_ptr<scheduler::SubmitInput> input,
                                              v1::SubmitRunResponse* resp) {
  Result<scheduler::RunPlan> plan = scheduler::PlanRun(store_, *input);
  if (!plan.ok()) return ToGrpc(plan.status());
  CheckReusedArtifacts(&*plan);
  scheduler::FinalizePlan(input->workflow, &*plan);
  auto shared_plan = std::make_shared<scheduler::RunPlan>(std::move(*plan));
  Result<scheduler::SubmitOutput> out = loop_->Call<scheduler::SubmitOutput>(
      [this, input, shared_plan]() {
        return scheduler_->Submit(std::move(*input), std::move(*shared_plan));
      });
  if (!out.ok()) return ToGrpc(out.status());
  if (out->run.id() != 0) *resp->mutable_run() = std::move(out->run);
  for (auto& e : out->plan) *resp->add_plan() = std::move(e);
  return grpc::Status::OK;
}

void ClientServiceImpl::CheckReusedArtifacts(scheduler::RunPlan* plan) {
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
        scheduler::RerunStage(plan, i, StrCat("cannot check the artifacts of run ", run_id,
                                              ": agent ", agent, " did not answer"));
        break;
      }
      Result<std::vector<std::string>> missing = future.get();
      if (!missing.ok()) {
        scheduler::RerunStage(plan, i, StrCat("the artifacts of run ", run_id, " are on agent ",
                                              agent, ", which is not connected"));
        break;
      }
      if (!missing->empty()) {
        std::string name;
        for (const auto* a : arts) {
          if (a->path == missing->front()) name = a->name;
        }
        scheduler::RerunStage(plan, i, StrCat("artifact '", name, "' of run ", run_id,
                                              " is gone: ", missing->front(), " (on ", agent,
                                              ")"));
        break;
      }
    }
  }
}

grpc::Status ClientServiceImpl::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                                       v1::Run* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kGetRun);
  if (!principal.ok()) return ToGrpc(principal.status());
  Result<v1::Run> run = store_->GetRun(req->id(), req->include_attempts());
  if (!run.ok()) return ToGrpc(run.status());
  *resp = std::move(*run);
  return grpc::Status::OK;
}

grpc::Status ClientServiceImpl::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                                         v1::ListRunsResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kListRuns);
  if (!principal.ok()) return ToGrpc(principal.status());
  Result<v1::ListRunsResponse> out = store_->ListRuns(*req);
  if (!out.ok()) return ToGrpc(out.status());
  *resp = std::move(*out);
  return grpc::Status::OK;
}

grpc::Status ClientServiceImpl::CancelRun(grpc::ServerContext* ctx, const v1::CancelRunRequest* req,
                                          v1::Run* resp) {
  return Mutate(ctx, auth::Action::kCancelRun, req, resp, &ClientServiceImpl::DoCancelRun);
}

grpc::Status ClientServiceImpl::DoCancelRun(const v1::CancelRunRequest* req, v1::Run* resp) {
  int64_t id = req->id();
  Result<v1::Run> out = loop_->Call<v1::Run>([this, id] { return scheduler_->Cancel(id); });
  if (!out.ok()) return ToGrpc(out.status());
  *resp = std::move(*out);
  return grpc::Status::OK;
}

grpc::Status ClientServiceImpl::RetryStage(grpc::ServerContext* ctx,
                                           const v1::RetryStageRequest* req,
                                           v1::Run* resp) {
  return Mutate(ctx, auth::Action::kRetryStage, req, resp, &ClientServiceImpl::DoRetryStage);
}

grpc::Status ClientServiceImpl::DoRetryStage(const v1::RetryStageRequest* req, v1::Run* resp) {
  int64_t id = req->run_id();
  std::string stage = req->stage();
  Result<v1::Run> out =
      loop_->Call<v1::Run>([this, id, stage] { return scheduler_->Retry(id, stage); });
  if (!out.ok()) return ToGrpc(out.status());
  *resp = std::move(*out);
  return grpc::Status::OK;
}

grpc::Status ClientServiceImpl::WatchRun(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                                         grpc::ServerWriter<v1::RunUpdate>* writer) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kWatchRun);
  if (!principal.ok()) return ToGrpc(principal.status());
  auto watcher = std::make_shared<scheduler::Watcher>();
  int64_t id = req->id();
  Result<bool> registered = loop_->Call<bool>([this, id, watcher]() -> Result<bool> {
    RETURN_IF_ERROR(scheduler_->Watch(id, watcher));
    return true;
  });
  if (!registered.ok()) return ToGrpc(registered.status());
  for (;;) {
    if (ctx->IsCancelled()) {
      watcher->Cancel();
      return grpc::Status::CANCELLED;
    }
    v1::RunUpdate update;
    bool final = false;
    if (!watcher->Next(&update, &final, 250)) continue;
    if (!writer->Write(update)) {
      watcher->Cancel();
      return grpc::Status::CANCELLED;
    }
    if (final) return grpc::Status::OK;
  }
}

grpc::Status ClientServiceImpl::ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest*,
                                           v1::ListAgentsResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kListAgents);
  if (!principal.ok()) return ToGrpc(principal.status());
  Result<std::vector<v1::AgentInfo>> agents = loop_->Call<std::vector<v1::AgentInfo>>(
      [this]() -> Result<std::vector<v1::AgentInfo>> { return scheduler_->ListAgents(); });
  if (!agents.ok()) return ToGrpc(agents.status());
  for (auto& a : *agents) *resp->add_agents() = std::move(a);
  return grpc::Status::OK;
}

grpc::Status ClientServiceImpl::ReadLog(grpc::ServerContext* ctx, const v1::ReadLogRequest* req,
                                        v1::ReadLogResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kReadLog);
  if (!principal.ok()) return ToGrpc(principal.status());
  if (!req->stream().empty() && req->stream() != "stdout" && req->stream() != "stderr") {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "stream must be 'stdout' or 'stderr', not '" + req->stream() + "'");
  }
  Result<store::AttemptRow> attempt = store_->FindAttempt(req->run_id(), req->stage(),
                                                          req->attempt());
  if (!attempt.ok()) return ToGrpc(attempt.status());
  auto promise = std::make_shared<std::promise<Result<v1::LogData>>>();
  std::future<Result<v1::LogData>> future = promise->get_future();
  store::AttemptRow row = *attempt;
  v1::ReadLogRequest request = *req;
  loop_->Post([this, row, request, promise] {
    scheduler_->ReadLog(row, request,
                        [promise](Result<v1::LogData> data) { promise->set_value(data); });
  });
  if (future.wait_for(std::chrono::milliseconds(log_timeout_ms_)) != std::future_status::ready) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "agent " + row.agent_id + " did not answer the log request in time");
  }
  Result<v1::LogData> data = future.get();
  if (!data.ok()) return ToGrpc(data.status());
  resp->set_data(data->data());
  resp->set_offset(data->offset());
  resp->set_next_offset(data->offset() + static_cast<int64_t>(data->data().size()));
  resp->set_attempt(row.number);
  resp->set_attempt_id(row.id);
  // Whether the attempt has ended now (the row read above may predate its end).
  Result<store::AttemptRow> now = store_->FindAttempt(req->run_id(), req->stage(), row.number);
  bool ended = now.ok() && IsTerminal(now->state);
  resp->set_finished(ended && resp->next_offset() >= data->size());
  return grpc::Status::OK;
}

grpc::Status ClientServiceImpl::ListEvents(grpc::ServerContext* ctx,
                                           const v1::ListEventsRequest* req,
                                           v1::ListEventsResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kListEvents);
  if (!principal.ok()) return ToGrpc(principal.status());
  Result<v1::ListEventsResponse> out = store_->ListEvents(*req);
  if (!out.ok()) return ToGrpc(out.status());
  *resp = std::move(*out);
  return grpc::Status::OK;
}

grpc::Status ClientServiceImpl::ListAudit(grpc::ServerContext* ctx, const v1::ListAuditRequest* req,
                                          v1::ListAuditResponse* resp) {
  auto principal = CheckCall(*authorizer_, ctx, auth::Action::kListAudit);
  if (!principal.ok()) return ToGrpc(principal.status());
  Result<v1::ListAuditResponse> out = store_->ListAudit(*req);
  if (!out.ok()) return ToGrpc(out.status());
  *resp = std::move(*out);
  return grpc::Status::OK;
}

}  // namespace longhaul::rpc

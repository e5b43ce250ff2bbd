// ClientApi::MetricsText and Ready: what GET /metrics and /readyz answer (docs/operations.md).
#include <chrono>
#include <future>
#include <memory>

#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "proto/state_names.h"

namespace longhaul::rpc {

Status ClientApi::Ready(int64_t timeout_ms) {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = promise->get_future();
  loop_->PostThen([] {}, [promise](const Status& commit) { promise->set_value(commit); });
  if (answer.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready) {
    return absl::UnavailableError(
        StrCat("the scheduler loop has not committed a batch within ", timeout_ms, " ms"));
  }
  Status commit = answer.get();
  if (!commit.ok()) {
    return absl::UnavailableError(StrCat("the store does not commit: ", commit.message()));
  }
  return OkStatus();
}

Result<std::string> ClientApi::MetricsText() {
  ASSIGN_OR_RETURN(scheduler::SchedulerGauges g,
                   loop_->Call<scheduler::SchedulerGauges>(
                       [this]() -> Result<scheduler::SchedulerGauges> {
                         return scheduler_->Gauges();
                       }));
  ASSIGN_OR_RETURN(auto runs, store_->CountRunsByStatus());

  metrics::TextWriter w;
  // Every status appears, with 0 where there is none, so that a rate or an alert on one
  // never sees the series vanish.
  w.Family("longhaul_runs", "gauge", "Runs in the store, by status.");
  for (int s = v1::RunStatus_MIN; s <= v1::RunStatus_MAX; ++s) {
    if (!v1::RunStatus_IsValid(s) || s == v1::RUN_STATUS_UNSPECIFIED) continue;
    std::string name(RunStatusName(static_cast<v1::RunStatus>(s)));
    auto it = runs.find(name);
    w.Sample("longhaul_runs", {{"status", name}},
             static_cast<double>(it == runs.end() ? 0 : it->second));
  }
  w.Family("longhaul_stages", "gauge", "Stages of the runs that have not ended, by status.");
  for (int s = v1::StageStatus_MIN; s <= v1::StageStatus_MAX; ++s) {
    if (!v1::StageStatus_IsValid(s) || s == v1::STAGE_STATUS_UNSPECIFIED) continue;
    std::string name(StageStatusName(static_cast<v1::StageStatus>(s)));
    auto it = g.stages.find(name);
    w.Sample("longhaul_stages", {{"status", name}},
             static_cast<double>(it == g.stages.end() ? 0 : it->second));
  }
  w.Family("longhaul_agents", "gauge", "Agents the coordinator knows, by state.");
  for (int s = v1::AgentState_MIN; s <= v1::AgentState_MAX; ++s) {
    if (!v1::AgentState_IsValid(s) || s == v1::AGENT_STATE_UNSPECIFIED) continue;
    std::string name(AgentStateName(static_cast<v1::AgentState>(s)));
    auto it = g.agents.find(name);
    w.Sample("longhaul_agents", {{"state", name}},
             static_cast<double>(it == g.agents.end() ? 0 : it->second));
  }
  w.Family("longhaul_gpus", "gauge", "GPUs offered by connected agents: busy or free.");
  w.Sample("longhaul_gpus", {{"state", "busy"}}, static_cast<double>(g.gpus_busy));
  w.Sample("longhaul_gpus", {{"state", "free"}}, static_cast<double>(g.gpus_total - g.gpus_busy));

  w.Family("longhaul_stage_progress_ratio", "gauge",
           "done / total of each running stage that reports a total.");
  for (const auto& r : g.running) {
    if (r.progress_ratio < 0) continue;
    w.Sample("longhaul_stage_progress_ratio",
             {{"run", StrCat(r.run_id)}, {"stage", r.stage}, {"agent", r.agent}},
             r.progress_ratio);
  }
  w.Family("longhaul_stage_eta_seconds", "gauge",
           "Estimated seconds until each running stage is done, where there is an estimate.");
  for (const auto& r : g.running) {
    if (r.eta_seconds < 0) continue;
    w.Sample("longhaul_stage_eta_seconds",
             {{"run", StrCat(r.run_id)}, {"stage", r.stage}, {"agent", r.agent}}, r.eta_seconds);
  }

  if (metrics_ != nullptr) {
    w.Family("longhaul_attempts_started_total", "counter", "Attempts that started on an agent.");
    w.Sample("longhaul_attempts_started_total", {},
             static_cast<double>(metrics_->attempts_started.load()));
    w.Family("longhaul_attempt_failures_total", "counter",
             "Attempts that ended other than in success, by the kind of end.");
    for (const auto& [reason, n] : metrics_->attempt_failures.Read()) {
      w.Sample("longhaul_attempt_failures_total", {{"reason", reason}}, static_cast<double>(n));
    }
    w.Family("longhaul_events_ingested_total", "counter",
             "Stage event lines stored (each once; re-sends are not counted).");
    w.Sample("longhaul_events_ingested_total", {},
             static_cast<double>(metrics_->events_ingested.load()));
    w.Write("longhaul_handoff_seconds",
            "From a stage becoming ready to its agent reporting that it started.",
            metrics_->handoff_seconds);
    w.Write("longhaul_sqlite_commit_seconds",
            "Duration of each commit of the scheduler's store transaction.",
            metrics_->sqlite_commit_seconds);
  }
  return w.text();
}

}  // namespace longhaul::rpc

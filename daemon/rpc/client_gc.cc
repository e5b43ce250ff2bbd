// ClientApi::CollectGarbage: retention. Chooses ended runs by age and by count per workflow
// (retention_policy.h: the daemon's policy, each workflow's own block, the request's flags),
// marks each collected (so that it can no longer be retried) and deletes its event rows in one
// commit on the scheduler loop, then asks each agent that holds its attempts to remove their
// directories and output dirs, keeping those of stages whose results the cache still reuses.
// The agents' disk work happens on the agents; this thread only waits for their answers.
#include <future>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/rpc/retention_policy.h"

namespace longhaul::rpc {

Result<v1::AttemptsRemoved> ClientApi::RemoveOnAgent(const std::string& agent,
                                                     v1::RemoveAttempts request) {
  auto promise = std::make_shared<std::promise<Result<v1::AttemptsRemoved>>>();
  auto future = promise->get_future();
  loop_->Post([this, agent, request = std::move(request), promise]() mutable {
    scheduler_->RemoveAttempts(agent, std::move(request),
                               [promise](Result<v1::AttemptsRemoved> r) {
                                 promise->set_value(std::move(r));
                               });
  });
  // Removing a big output dir takes what the file system takes; allow it minutes.
  if (future.wait_for(std::chrono::milliseconds(std::max<int64_t>(log_timeout_ms_, 600'000))) !=
      std::future_status::ready) {
    return absl::DeadlineExceededError(StrCat("agent ", agent, " did not answer"));
  }
  return future.get();
}

Result<std::map<std::string, workflow::RetentionSpec>> ClientApi::DeclaredRetention(
    const std::string& workflow_name) {
  ASSIGN_OR_RETURN(auto newest, store_->NewestWorkflowIds(workflow_name));
  std::map<std::string, workflow::RetentionSpec> declared;
  std::lock_guard<std::mutex> lock(retention_mu_);
  for (const auto& [name, workflow_id] : newest) {
    auto it = declared_retention_.find(workflow_id);
    if (it == declared_retention_.end()) {
      // Stored files are immutable: each is parsed once.
      workflow::RetentionSpec spec;
      ASSIGN_OR_RETURN(std::string text, store_->LoadWorkflowText(workflow_id));
      // A file without the word has no block: a big workflow is not parsed for nothing.
      Result<workflow::Workflow> wf = text.find("retention") == std::string::npos
                                          ? Result<workflow::Workflow>(workflow::Workflow())
                                          : workflow::ParseWorkflow(text, name);
      if (wf.ok()) {
        spec = wf->retention;
      } else {
        GetLogger("gc")->warn("workflow {}: its stored file does not parse ({}); the daemon's "
                              "retention applies to it", name, ToStd(wf.status().message()));
      }
      it = declared_retention_.emplace(workflow_id, spec).first;
    }
    if (!it->second.empty()) declared[name] = it->second;
  }
  return declared;
}

Result<v1::GcResponse> ClientApi::CollectGarbage(const v1::GcRequest& req) {
  RetentionRule daemon{retention_.older_than_ms, retention_.keep_last};
  RetentionRule request{req.older_than_ms(), static_cast<int>(req.keep_last())};
  v1::GcResponse resp;
  resp.set_dry_run(req.dry_run());
  int64_t now = clock_->NowMs();

  // The runs to collect, and why.
  std::vector<std::pair<int64_t, std::string>> chosen;  // run id, why
  std::map<int64_t, std::string> workflow_of;
  if (req.run_ids_size() > 0) {
    resp.set_policy("the runs named");
    for (int64_t id : req.run_ids()) {
      ASSIGN_OR_RETURN(store::RunRow run, store_->LoadRun(id));
      if (!run.ended_at_ms || run.status == v1::RUN_RUNNING || run.status == v1::RUN_PENDING) {
        return absl::FailedPreconditionError(StrCat("run ", id, " has not ended"));
      }
      chosen.emplace_back(id, "named");
      workflow_of[id] = run.workflow_name;
    }
  } else {
    ASSIGN_OR_RETURN(auto declared, DeclaredRetention(req.workflow()));
    resp.set_policy(RetentionPolicyText(daemon, request, declared));
    if (!daemon.any() && !request.any() && declared.empty()) return resp;
    ASSIGN_OR_RETURN(auto ended, store_->ListEndedRuns(req.workflow()));
    for (RetentionChoice& c : ChooseRunsToCollect(ended, daemon, request, declared, now)) {
      chosen.emplace_back(c.run_id, std::move(c.why));
      workflow_of[c.run_id] = c.workflow_name;
    }
  }

  for (const auto& [run_id, why] : chosen) {
    v1::GcRun* out = resp.add_runs();
    out->set_run_id(run_id);
    out->set_workflow_name(workflow_of[run_id]);
    out->set_why(why);
    ASSIGN_OR_RETURN(store::SqliteStore::GcPlan plan, store_->PlanRunGc(run_id));
    for (const auto& k : plan.kept) out->add_kept(k);
    // Per agent: the attempts to remove, and the output dirs no kept attempt uses.
    std::set<std::string> kept_dirs;
    for (const auto& a : plan.attempts) {
      if (a.keep) kept_dirs.insert(a.output_dir);
    }
    std::map<std::string, v1::RemoveAttempts> by_agent;
    for (const auto& a : plan.attempts) {
      if (a.keep || a.agent_id.empty()) continue;
      v1::RemoveAttempts& r = by_agent[a.agent_id];
      r.set_dry_run(req.dry_run());
      r.add_attempt_ids(a.id);
      if (!a.output_dir.empty() && !kept_dirs.count(a.output_dir)) {
        bool listed = false;
        for (const auto& d : r.output_dirs()) listed = listed || d == a.output_dir;
        if (!listed) r.add_output_dirs(a.output_dir);
      }
    }
    if (!req.dry_run()) {
      // First the record (a collected run can no longer be retried), then the files.
      Result<int64_t> events = loop_->Call<int64_t>([this, run_id = run_id, now]() -> Result<int64_t> {
        if (scheduler_->RunIsActive(run_id)) {
          return absl::FailedPreconditionError(StrCat("run ", run_id, " is running again"));
        }
        return store_->CollectRun(run_id, now);
      });
      if (!events.ok()) {
        out->set_error(ToStd(events.status().message()));
        continue;
      }
      out->set_events(*events);
      resp.set_runs_collected(resp.runs_collected() + 1);
    } else {
      out->set_events(plan.events);
    }
    std::vector<std::string> errors;
    for (auto& [agent, request] : by_agent) {
      Result<v1::AttemptsRemoved> removed = RemoveOnAgent(agent, std::move(request));
      if (!removed.ok()) {
        errors.push_back(StrCat(ToStd(removed.status().message()), ": its files for run ", run_id,
                                " stay until `longhaul gc --run ", run_id, "` while it is connected"));
        continue;
      }
      out->set_attempt_dirs(out->attempt_dirs() + removed->attempt_dirs());
      out->set_output_dirs(out->output_dirs() + removed->output_dirs());
      out->set_bytes(out->bytes() + removed->bytes());
      for (const auto& e : removed->errors()) errors.push_back(StrCat(agent, ": ", e));
    }
    if (!errors.empty()) out->set_error(StrJoin(errors, "; "));
    resp.set_bytes(resp.bytes() + out->bytes());
    resp.set_events(resp.events() + out->events());
  }
  if (!req.dry_run() && resp.runs_collected() > 0) {
    GetLogger("gc")->info("retention collected {} run(s): {} bytes on agents, {} event rows ({})",
                          resp.runs_collected(), resp.bytes(), resp.events(), resp.policy());
  }
  return resp;
}

}  // namespace longhaul::rpc

#include "daemon/scheduler/planner.h"

#include <set>
#include <string_view>
#include <unordered_map>

#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {
namespace {

// Stages downstream of `from` (itself included).
std::set<std::string> Downstream(const workflow::Workflow& wf, const std::string& from) {
  std::set<std::string> out = {from};
  for (const auto& spec : wf.stages) {  // topological order: needs come first
    for (const auto& need : spec.needs) {
      if (out.count(need)) out.insert(spec.name);
    }
  }
  return out;
}

}  // namespace

Result<RunPlan> PlanRun(store::SqliteStore* store, const SubmitInput& input) {
  const workflow::Workflow& wf = input.workflow;
  RunPlan plan;
  ASSIGN_OR_RETURN(plan.params, workflow::ResolveParams(wf, input.overrides));
  std::set<std::string> forced;
  if (!input.from_stage.empty()) {
    if (wf.FindStage(input.from_stage) == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("--from: workflow '", wf.name, "' has no stage '", input.from_stage, "'"));
    }
    forced = Downstream(wf, input.from_stage);
  }
  // What the reasons compare against.
  if (input.parent_run_id) {
    plan.reference_run = *input.parent_run_id;
  } else {
    ASSIGN_OR_RETURN(plan.reference_run, store->LatestRunOf(wf.name));
  }
  // The reference run's stages by name; a fingerprint is parsed only when a reason needs it
  // (a stage whose key changed), which a resubmitted 100,000-stage file rarely does.
  std::vector<store::StageRow> before_rows;
  std::unordered_map<std::string_view, const store::StageRow*> before;
  if (plan.reference_run) {
    ASSIGN_OR_RETURN(before_rows, store->ReadStages(*plan.reference_run));
    before.reserve(before_rows.size());
    for (const auto& row : before_rows) before.emplace(row.name, &row);
  }
  std::map<std::string, std::string> keys;
  plan.stages.reserve(wf.stages.size());
  for (const auto& spec : wf.stages) {
    StagePlan sp;
    sp.stage = spec.name;
    sp.service = spec.kind == workflow::StageKind::kService;
    std::map<std::string, std::string> upstream;
    for (const auto& need : spec.needs) upstream[need] = keys[need];
    sp.fingerprint = workflow::FingerprintStage(spec, plan.params, upstream);
    keys[spec.name] = sp.fingerprint.key;
    if (input.no_cache) {
      sp.reason = "--no-cache";
    } else if (!spec.cache) {
      sp.reason = "cache: false";
    } else if (forced.count(spec.name)) {
      sp.reason = spec.name == input.from_stage
                      ? StrCat("--from ", input.from_stage)
                      : StrCat("downstream of --from ", input.from_stage);
    } else {
      ASSIGN_OR_RETURN(std::optional<store::CacheHit> hit,
                       store->FindCacheHit(sp.fingerprint.key, /*exclude_run_id=*/0));
      if (hit) {
        sp.action = "reuse";
        sp.reason = StrCat("same inputs as run ", hit->run_id,
                           hit->stage_name == spec.name ? "" : StrCat(" stage '", hit->stage_name, "'"));
        sp.hit = std::move(hit);
      } else {
        auto old = before.find(spec.name);
        Result<workflow::StageFingerprint> old_fp = absl::NotFoundError("");
        if (old != before.end() && old->second->cache_key != sp.fingerprint.key) {
          old_fp = workflow::ParseFingerprintJson(old->second->fingerprint_json);
        }
        if (old == before.end() || (!old_fp.ok() && old->second->cache_key != sp.fingerprint.key)) {
          sp.reason = plan.reference_run ? StrCat("new stage since run ", *plan.reference_run)
                                         : "no earlier run";
        } else {
          std::vector<std::string> why =
              old_fp.ok() ? workflow::ExplainDifference(*old_fp, sp.fingerprint)
                          : std::vector<std::string>{};
          sp.reason = why.empty() ? StrCat("run ", *plan.reference_run, " did not finish it")
                                  : StrJoin(why, "; ");
        }
      }
    }
    plan.stages.push_back(std::move(sp));
  }
  return plan;
}

void RerunStage(RunPlan* plan, size_t index, std::string reason) {
  StagePlan& sp = plan->stages[index];
  sp.action = "run";
  sp.reason = std::move(reason);
  sp.hit.reset();
}

void FinalizePlan(const workflow::Workflow& wf, RunPlan* plan) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < plan->stages.size(); ++i) index[plan->stages[i].stage] = i;
  // Walk dependents before the services they need (reverse topological order), so a chain of
  // services resolves in one pass.
  for (size_t i = wf.stages.size(); i-- > 0;) {
    const auto& spec = wf.stages[i];
    StagePlan& sp = plan->stages[index[spec.name]];
    if (!sp.service) continue;
    std::vector<std::string> running;
    for (const auto& other : wf.stages) {
      for (const auto& need : other.needs) {
        if (need == spec.name && plan->stages[index[other.name]].action == "run") {
          running.push_back(other.name);
        }
      }
    }
    if (!running.empty()) {
      if (sp.action != "run") {
        sp.action = "run";
        sp.hit.reset();
        sp.reason = StrCat("needed by ", StrJoin(running, ", "));
      } else {
        sp.reason = StrCat(sp.reason, "; needed by ", StrJoin(running, ", "));
      }
    } else if (sp.hit) {
      sp.action = "reuse";
      sp.reason = StrCat("not started: every stage that needs it is reused (",
                         sp.reason, ")");
    } else {
      sp.action = "skip";
      sp.reason = "not started: no stage that needs it runs";
    }
  }
}

v1::PlanEntry PlanEntryOf(const StagePlan& sp) {
  v1::PlanEntry e;
  e.set_stage(sp.stage);
  e.set_action(sp.action);
  e.set_reason(sp.reason);
  e.set_cache_key(sp.fingerprint.key);
  if (sp.hit) {
    e.set_reuse_run_id(sp.hit->run_id);
    e.set_reuse_stage(sp.hit->stage_name);
  }
  return e;
}

}  // namespace longhaul::scheduler

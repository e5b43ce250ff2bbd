#include "daemon/scheduler/planner.h"

#include <set>
#include <string_view>
#include <unordered_map>

#include "core/memory_policy.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/scheduler/sweep_rejudge.h"

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
  ASSIGN_OR_RETURN(plan.tags, ResolveTags(store, wf));
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
  // Fingerprints in topological order: a stage's key hashes the keys of the stages it needs.
  // `keys` points into plan.stages, which does not reallocate (reserved).
  size_t n = wf.stages.size();
  plan.stages.reserve(n);
  NoteBigBuffer(plan.stages.data(), plan.stages.capacity() * sizeof(StagePlan));
  std::unordered_map<std::string_view, const std::string*> keys;
  keys.reserve(n);
  std::vector<std::string_view> lookup(n);  // the keys to look up; empty: no reuse asked
  for (size_t i = 0; i < n; ++i) {
    const workflow::StageSpec& spec = wf.stages[i];
    StagePlan& sp = plan.stages.emplace_back();
    sp.stage = spec.name;
    sp.service = spec.kind == workflow::StageKind::kService;
    std::map<std::string, std::string> upstream;
    for (const auto& need : spec.needs) {
      auto it = keys.find(need);
      upstream[need] = it == keys.end() ? std::string() : *it->second;
    }
    sp.fingerprint = workflow::FingerprintStage(spec, plan.params, upstream, &plan.tags.bindings);
    keys.emplace(spec.name, &sp.fingerprint.key);
    if (input.no_cache) {
      sp.reason = "--no-cache";
    } else if (!spec.cache) {
      sp.reason = "cache: false";
    } else if (forced.count(spec.name)) {
      sp.reason = spec.name == input.from_stage
                      ? StrCat("--from ", input.from_stage)
                      : StrCat("downstream of --from ", input.from_stage);
    } else {
      lookup[i] = sp.fingerprint.key;
    }
  }
  // Every candidate in one read transaction, then the reasons of the stages without one.
  ASSIGN_OR_RETURN(std::vector<std::optional<store::CacheHit>> hits,
                   store->FindCacheHits(lookup, /*exclude_run_id=*/0));
  // The reference run's keys by name; a fingerprint is read and parsed only when a reason
  // needs it (a stage whose key changed), which a resubmitted 100,000-stage file rarely does.
  std::vector<store::SqliteStore::StageKey> before_rows;
  std::unordered_map<std::string_view, const store::SqliteStore::StageKey*> before;
  if (plan.reference_run) {
    ASSIGN_OR_RETURN(before_rows, store->ReadStageKeys(*plan.reference_run));
    before.reserve(before_rows.size());
    for (const auto& row : before_rows) before.emplace(row.name, &row);
  }
  std::vector<int64_t> changed_ids;  // reference stages whose key differs
  std::vector<size_t> changed_at;    // ... and the plan index of each
  for (size_t i = 0; i < n; ++i) {
    StagePlan& sp = plan.stages[i];
    if (lookup[i].empty()) continue;
    if (hits[i]) {
      sp.action = "reuse";
      sp.reason = StrCat("same inputs as run ", hits[i]->run_id,
                         hits[i]->stage_name == sp.stage
                             ? ""
                             : StrCat(" stage '", hits[i]->stage_name, "'"));
      sp.hit = std::move(hits[i]);
      continue;
    }
    auto old = before.find(sp.stage);
    if (old == before.end()) {
      sp.reason = plan.reference_run ? StrCat("new stage since run ", *plan.reference_run)
                                     : "no earlier run";
      continue;
    }
    if (old->second->cache_key == sp.fingerprint.key) {
      sp.reason = StrCat("run ", *plan.reference_run, " did not finish it");
      continue;
    }
    changed_ids.push_back(old->second->id);
    changed_at.push_back(i);
  }
  if (!changed_ids.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> jsons,
                     store->ReadFingerprintJsons(changed_ids));
    for (size_t k = 0; k < changed_at.size(); ++k) {
      StagePlan& sp = plan.stages[changed_at[k]];
      Result<workflow::StageFingerprint> old_fp =
          jsons[k] ? workflow::ParseFingerprintJson(*jsons[k])
                   : Result<workflow::StageFingerprint>(absl::NotFoundError(""));
      if (!old_fp.ok()) {  // unreadable: as if the stage were new
        sp.reason = StrCat("new stage since run ", *plan.reference_run);
        continue;
      }
      std::vector<std::string> why = workflow::ExplainDifference(*old_fp, sp.fingerprint);
      sp.reason = why.empty() ? StrCat("run ", *plan.reference_run, " did not finish it")
                              : StrJoin(why, "; ");
    }
  }
  RETURN_IF_ERROR(RejudgeSweeps(store, wf, &plan));
  RETURN_IF_ERROR(CheckRecordedVersions(store, wf, &plan));
  return plan;
}

void RerunStage(RunPlan* plan, size_t index, std::string reason) {
  StagePlan& sp = plan->stages[index];
  sp.action = "run";
  sp.reason = std::move(reason);
  sp.hit.reset();
}

void FinalizePlan(const workflow::Workflow& wf, RunPlan* plan) {
  bool any_service = false;
  for (const StagePlan& sp : plan->stages) any_service = any_service || sp.service;
  if (!any_service) return;
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(plan->stages.size());
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

#include "daemon/scheduler/sweep_rejudge.h"

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/strings.h"
#include "daemon/scheduler/early_stop.h"

namespace longhaul::scheduler {
namespace {

// The early_stop rule of each foreach stage that has one, by the stage's name as written.
std::map<std::string, const workflow::EarlyStopSpec*> EarlyStopRulesOf(
    const workflow::Workflow& wf) {
  std::map<std::string, const workflow::EarlyStopSpec*> out;
  for (const workflow::StageSpec& spec : wf.stages) {
    if (spec.early_stop) out.emplace(spec.early_stop->sweep, spec.early_stop.get());
  }
  return out;
}

bool RejudgeEndedWithValues(v1::StageStatus st) {
  return st == v1::STAGE_SUCCEEDED || st == v1::STAGE_CACHED || st == v1::STAGE_STOPPED_EARLY;
}

// One sweep whose rule changed: the items judged again, by plan index.
struct RejudgedSweepItem {
  size_t index = 0;
  const store::StageRow* before = nullptr;  // the reference run's item
  int64_t values_of = 0;                    // the stage whose stored values are its own
};

// Judges `items` on `values`; adds to `changed` the items whose state the reference run's
// reused dependents were not made with: stopped now but finished there, or the other way.
void JudgeSweepAgain(const workflow::EarlyStopSpec& rule, int64_t reference,
                     const std::vector<RejudgedSweepItem>& items,
                     const std::vector<store::MetricRow>& values, RunPlan* plan,
                     std::set<std::string>* changed) {
  std::unordered_map<int64_t, const RejudgedSweepItem*> by_source;
  for (const RejudgedSweepItem& it : items) by_source[it.values_of] = &it;
  SweepJudge judge(rule);
  std::map<size_t, EarlyStopVerdict> stopped;  // plan index -> the verdict
  for (const store::MetricRow& m : values) {
    auto it = by_source.find(m.stage_id);
    if (!m.step || it == by_source.end()) continue;
    const std::string& name = plan->stages[it->second->index].stage;
    std::optional<EarlyStopVerdict> verdict = judge.Observe(name, *m.step, m.value);
    if (verdict) stopped.emplace(it->second->index, std::move(*verdict));
  }
  for (const RejudgedSweepItem& it : items) {
    StagePlan& sp = plan->stages[it.index];
    sp.judged_from = it.values_of;
    auto verdict = stopped.find(it.index);
    bool was_stopped = it.before->status == v1::STAGE_STOPPED_EARLY;
    if ((verdict != stopped.end()) != was_stopped) changed->insert(sp.stage);
    if (verdict != stopped.end()) {
      sp.action = "stop";
      sp.hit.reset();
      sp.reason = StrCat("stopped by the new rule at ", verdict->second.reason);
      continue;
    }
    std::string kept = judge.Kept(sp.stage);
    std::string why = kept.empty() ? "kept by the new rule (not judged on the stored values)"
                                   : StrCat("kept by the new rule: ", kept);
    if (sp.action == "reuse") {
      sp.reason = StrCat(why, "; ", sp.reason);
    } else {
      sp.reason = StrCat(why, "; stopped early in run ", reference, " by the earlier rule");
    }
  }
}

// Stages that would have been reused but need an item in `changed` (or a stage that runs again
// for that reason) run again: their reused result was made with the item in its other state.
void RunDependentsOfChanged(const workflow::Workflow& wf, std::set<std::string> changed,
                            RunPlan* plan) {
  if (changed.empty()) return;
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < plan->stages.size(); ++i) index[plan->stages[i].stage] = i;
  for (size_t i = 0; i < wf.stages.size(); ++i) {  // topological order
    StagePlan& sp = plan->stages[i];
    if (sp.action == "stop") continue;
    for (const std::string& need : wf.stages[i].needs) {
      if (!changed.count(need)) continue;
      changed.insert(sp.stage);
      if (sp.action == "reuse") {
        RerunStage(plan, i,
                   plan->stages[index[need]].action == "stop"
                       ? StrCat("needs '", need, "', which the new rule stops")
                       : StrCat("upstream '", need, "' runs again"));
      }
      break;
    }
  }
}

}  // namespace

bool SameEarlyStopRule(const workflow::EarlyStopSpec& a, const workflow::EarlyStopSpec& b) {
  if (a.metric != b.metric || a.maximize != b.maximize || a.rule != b.rule || a.rungs != b.rungs) {
    return false;
  }
  return a.rule == workflow::EarlyStopSpec::Rule::kAsha ? a.eta == b.eta
                                                        : a.min_items == b.min_items;
}

Status RejudgeSweeps(store::SqliteStore* store, const workflow::Workflow& wf, RunPlan* plan) {
  if (!plan->reference_run) return OkStatus();
  std::map<std::string, const workflow::EarlyStopSpec*> rules = EarlyStopRulesOf(wf);
  if (rules.empty()) return OkStatus();
  int64_t reference = *plan->reference_run;
  ASSIGN_OR_RETURN(store::SqliteStore::RunSource source, store->GetRunSource(reference));
  Result<workflow::Workflow> before_wf =
      workflow::ParseWorkflow(source.workflow_text, source.workflow_path);
  if (!before_wf.ok()) return OkStatus();  // nothing to compare with
  std::map<std::string, const workflow::EarlyStopSpec*> before_rules = EarlyStopRulesOf(*before_wf);
  std::vector<const workflow::EarlyStopSpec*> new_rules;
  for (const auto& [sweep, rule] : rules) {
    auto old = before_rules.find(sweep);
    if (old == before_rules.end() || !SameEarlyStopRule(*old->second, *rule)) {
      new_rules.push_back(rule);
    }
  }
  if (new_rules.empty()) return OkStatus();
  std::set<std::string> changed_items;
  ASSIGN_OR_RETURN(std::vector<store::StageRow> before_rows, store->ReadStages(reference));
  std::unordered_map<std::string_view, const store::StageRow*> before;
  for (const store::StageRow& row : before_rows) before.emplace(row.name, &row);
  for (const workflow::EarlyStopSpec* rule : new_rules) {
    std::vector<RejudgedSweepItem> items;
    std::vector<int64_t> sources;
    for (size_t i = 0; i < wf.stages.size(); ++i) {
      const workflow::StageSpec& spec = wf.stages[i];
      if (!spec.early_stop || spec.early_stop->sweep != rule->sweep) continue;
      auto old = before.find(spec.name);
      if (old == before.end() || !RejudgeEndedWithValues(old->second->status) ||
          old->second->cache_key.view() != plan->stages[i].fingerprint.key) {
        continue;
      }
      const StagePlan& sp = plan->stages[i];
      int64_t source =
          sp.hit ? sp.hit->stage_id : old->second->cached_from_stage_id.value_or(old->second->id);
      items.push_back({i, old->second, source});
      sources.push_back(source);
    }
    if (items.empty()) continue;
    ASSIGN_OR_RETURN(std::vector<store::MetricRow> values,
                     store->ReadMetricOfStages(sources, rule->metric));
    JudgeSweepAgain(*rule, reference, items, values, plan, &changed_items);
  }
  RunDependentsOfChanged(wf, std::move(changed_items), plan);
  return OkStatus();
}

}  // namespace longhaul::scheduler

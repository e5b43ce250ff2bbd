// Early stopping in sweeps (docs/sweeps.md, "Early stopping"): judging the items of a foreach
// stage with `early_stop` as their metric values arrive, stopping the losers, and what their
// dependents do then.
#include <map>
#include <string_view>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {

SweepJudge* Scheduler::JudgeOf(RunState* run, const workflow::EarlyStopSpec& spec) {
  std::unique_ptr<SweepJudge>& judge = run->judges[spec.sweep];
  if (judge) return judge.get();
  // The values stored before this one (a restart, or items reused from the cache), in the
  // order they came: the verdicts come out as they did when they arrived.
  std::map<int64_t, StageState*> item_of;
  std::vector<int64_t> ids;
  for (auto& s : run->stages) {
    if (s->spec->early_stop == nullptr || s->spec->early_stop->sweep != spec.sweep) continue;
    int64_t id = s->row.cached_from_stage_id.value_or(s->row.id);
    item_of[id] = s.get();
    ids.push_back(id);
  }
  // Items judged again at submission under a changed rule take an earlier stage's values.
  Result<std::map<int64_t, int64_t>> judged_from = store_->LoadJudgedFrom(ids);
  if (judged_from.ok()) {
    for (const auto& [own, from] : *judged_from) {
      item_of[from] = item_of[own];
      ids.push_back(from);
    }
  }
  Result<std::vector<store::MetricRow>> rows =
      judged_from.ok() ? store_->LoadMetricOfStages(ids, spec.metric)
                       : Result<std::vector<store::MetricRow>>(judged_from.status());
  if (!rows.ok()) {
    GetLogger("scheduler")
        ->error("run {} sweep {}: loading its {} values: {}", run->row.id, spec.sweep, spec.metric,
                ToStd(rows.status().message()));
    return nullptr;  // judged on the next value
  }
  judge = std::make_unique<SweepJudge>(spec);
  for (const store::MetricRow& m : *rows) {
    auto it = item_of.find(m.stage_id);
    if (!m.step || it == item_of.end()) continue;
    StageState* item = it->second;
    std::optional<EarlyStopVerdict> verdict = judge->Observe(item->row.name, *m.step, m.value);
    if (!verdict) continue;
    // Stopped before the restart, or it would have been: stop it if it still runs.
    if (item->current != nullptr && item->current->kill_reason.empty()) {
      StopAttempt(item->current, "stopped_early", verdict->reason);
    }
  }
  return judge.get();
}

void Scheduler::JudgeEarlyStop(AttemptState* a, const std::string& metric, int64_t step,
                               double value) {
  StageState* s = a->stage;
  const workflow::EarlyStopSpec& spec = *s->spec->early_stop;
  if (metric != spec.metric) return;
  SweepJudge* judge = JudgeOf(s->run, spec);
  if (judge == nullptr) return;
  std::optional<EarlyStopVerdict> verdict = judge->Observe(s->row.name, step, value);
  if (!verdict || !a->kill_reason.empty()) return;
  GetLogger("scheduler")
      ->info("run {} stage {}: stopping early: {}", s->run->row.id, s->row.name, verdict->reason);
  StopAttempt(a, "stopped_early", verdict->reason);
}

void Scheduler::StageStoppedEarly(StageState* s, const std::string& reason) {
  SetStageStatus(s, v1::STAGE_STOPPED_EARLY, reason);
  Propagate(s);
  MaybeFinishRun(s->run);
}

bool Scheduler::SkipIfSweepStopped(StageState* s) {
  struct Needed {
    int items = 0;
    int stopped = 0;
    const StageState* first_stopped = nullptr;
  };
  std::map<std::string_view, Needed> sweeps;
  for (int d : s->deps) {
    const StageState* dep = s->run->stages[d].get();
    if (dep->spec->early_stop == nullptr) continue;
    Needed& n = sweeps[dep->spec->early_stop->sweep];
    n.items++;
    if (dep->row.status == v1::STAGE_STOPPED_EARLY) {
      n.stopped++;
      if (n.first_stopped == nullptr) n.first_stopped = dep;
    }
  }
  for (const auto& [sweep, n] : sweeps) {
    if (n.stopped == 0 || n.stopped < n.items) continue;
    std::string reason = n.items == 1
                             ? StrCat("needs '", n.first_stopped->row.name,
                                      "', which stopped early: ", n.first_stopped->row.reason)
                             : StrCat("every item it needs of sweep '", sweep, "' stopped early (",
                                      n.items, " items)");
    SetStageStatus(s, v1::STAGE_SKIPPED, reason);
    SkipDependents(s);
    Propagate(s);
    return true;
  }
  return false;
}

bool Scheduler::HasHarmfulSkip(const RunState* run) const {
  // Stages are in topological order: a stage's dependencies are judged before it.
  std::vector<bool> harmless(run->stages.size(), false);
  for (const auto& s : run->stages) {
    if (s->row.status != v1::STAGE_SKIPPED) continue;
    for (int d : s->deps) {
      v1::StageStatus st = run->stages[d]->row.status;
      if (st == v1::STAGE_FAILED || st == v1::STAGE_CANCELLED ||
          (st == v1::STAGE_SKIPPED && !harmless[d])) {
        return true;
      }
    }
    harmless[s->index] = true;
  }
  return false;
}

}  // namespace longhaul::scheduler

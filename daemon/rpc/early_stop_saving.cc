#include "daemon/rpc/early_stop_saving.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include "proto/state_names.h"

namespace longhaul::rpc {
namespace {

struct EarlyStopSweepCost {
  double finished_steps = 0;
  double finished_wall = 0;
  double finished_gpu = 0;
  int finished = 0;
  double spent_wall = 0;  // every item's own attempts in this run
  double spent_gpu = 0;
  std::vector<const v1::Stage*> stopped;
};

// The steps an item did: its progress `done`, or the largest step of a metric it reported
// when that is more (a trainer that reports only its loss).
double EarlyStopStepsDone(const v1::Stage& s) {
  double steps = s.progress().done();
  for (const v1::Metric& m : s.metrics()) steps = std::max(steps, static_cast<double>(m.step()));
  return steps;
}

}  // namespace

std::optional<v1::EarlyStopSaving> EstimateEarlyStopSaving(
    const workflow::Workflow& wf, const google::protobuf::RepeatedPtrField<v1::Stage>& stages) {
  std::map<std::string, std::string> sweep_of;  // item -> its sweep
  for (const workflow::StageSpec& spec : wf.stages) {
    if (spec.early_stop) sweep_of[spec.name] = spec.early_stop->sweep;
  }
  std::map<std::string, EarlyStopSweepCost> sweeps;
  for (const v1::Stage& s : stages) {
    auto it = sweep_of.find(s.name());
    if (it == sweep_of.end()) continue;
    EarlyStopSweepCost& c = sweeps[it->second];
    c.spent_wall += s.wall_seconds();
    c.spent_gpu += s.gpu_hours();
    if (s.status() == v1::STAGE_STOPPED_EARLY) {
      c.stopped.push_back(&s);
    } else if (s.status() == v1::STAGE_SUCCEEDED && s.wall_seconds() > 0 &&
               EarlyStopStepsDone(s) > 0) {
      c.finished++;
      c.finished_steps += EarlyStopStepsDone(s);
      c.finished_wall += s.wall_seconds();
      c.finished_gpu += s.gpu_hours();
    }
  }
  v1::EarlyStopSaving out;
  bool any = false, gpu = false;
  double spent_wall = 0, spent_gpu = 0;
  for (const auto& [sweep, c] : sweeps) {
    if (c.stopped.empty() || c.finished == 0) continue;
    any = true;
    gpu = gpu || c.finished_gpu > 0;
    double mean_steps = c.finished_steps / c.finished;
    for (const v1::Stage* s : c.stopped) {
      double total = s->progress().total() > 0 ? s->progress().total() : mean_steps;
      double left = std::max(0.0, total - EarlyStopStepsDone(*s));
      out.set_wall_seconds(out.wall_seconds() + left * c.finished_wall / c.finished_steps);
      out.set_gpu_hours(out.gpu_hours() + left * c.finished_gpu / c.finished_steps);
    }
    out.set_stopped_items(out.stopped_items() + static_cast<int32_t>(c.stopped.size()));
    spent_wall += c.spent_wall;
    spent_gpu += c.spent_gpu;
  }
  if (!any) return std::nullopt;
  double saved = gpu ? out.gpu_hours() : out.wall_seconds();
  double whole = saved + (gpu ? spent_gpu : spent_wall);
  out.set_percent(whole > 0 ? 100 * saved / whole : 0);
  return out;
}

Result<std::optional<v1::EarlyStopSaving>> EarlyStopSavingOfRun(store::SqliteStore* store,
                                                                const v1::Run& run) {
  auto stopped = run.stage_counts().find(std::string(StageStatusName(v1::STAGE_STOPPED_EARLY)));
  if (stopped == run.stage_counts().end() || stopped->second == 0) return std::nullopt;
  ASSIGN_OR_RETURN(store::SqliteStore::RunSource src, store->GetRunSource(run.id()));
  Result<workflow::Workflow> wf = workflow::ParseWorkflow(src.workflow_text, src.workflow_path);
  if (!wf.ok()) return std::nullopt;  // a file this longhauld cannot read: nothing to say
  ASSIGN_OR_RETURN(v1::Run full, store->GetRun(run.id(), /*include_attempts=*/false));
  return EstimateEarlyStopSaving(*wf, full.stages());
}

Result<std::optional<v1::EarlyStopSaving>> EarlyStopSavingOfPlan(store::SqliteStore* store,
                                                                 const workflow::Workflow& wf,
                                                                 const scheduler::RunPlan& plan) {
  std::map<std::string_view, const scheduler::StagePlan*> stops;
  for (const scheduler::StagePlan& sp : plan.stages) {
    if (sp.action == "stop") stops.emplace(sp.stage, &sp);
  }
  if (stops.empty() || !plan.reference_run) return std::nullopt;
  ASSIGN_OR_RETURN(v1::Run before, store->GetRun(*plan.reference_run, /*include_attempts=*/false));
  // The reference's items as this plan leaves them: the ones it stops did nothing; the others
  // that did not finish there count only as spent.
  for (v1::Stage& s : *before.mutable_stages()) {
    if (stops.count(s.name())) {
      s.set_status(v1::STAGE_STOPPED_EARLY);
      s.mutable_progress()->set_done(0);
      s.clear_metrics();
      s.set_wall_seconds(0);
      s.set_gpu_hours(0);
    } else if (s.status() == v1::STAGE_STOPPED_EARLY) {
      s.set_status(v1::STAGE_WAITING);
    }
  }
  return EstimateEarlyStopSaving(wf, before.stages());
}

}  // namespace longhaul::rpc

// What early stopping saved a run (docs/sweeps.md, "What stopping saved"): an estimate of the
// work its stopped sweep items did not do, from the items of the same sweep that finished.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"
#include "daemon/scheduler/planner.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/workflow.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::rpc {

// For each foreach stage of `wf` with `early_stop`, from its items among `stages` (v1::Stage
// with status, progress, wall_seconds, gpu_hours):
//
//   finished   the items that succeeded in this run (their own attempts: wall time > 0) that
//              did steps; none: the sweep is not estimated.
//   steps      an item's progress done, or the largest step of a metric it reported if more.
//   per step   the finished items' wall time and GPU-hours summed, over their steps summed.
//   saved      for each item stopped early, (its progress total, else the finished items' mean
//              steps) less the steps it did, at least 0, times the per-step figures.
//
// The percent is saved / (what the sweep's items spent + saved), summed over the sweeps, in
// GPU-hours when a sweep's finished items held GPUs, else in stage time. nullopt when no sweep
// could be estimated.
std::optional<v1::EarlyStopSaving> EstimateEarlyStopSaving(
    const workflow::Workflow& wf, const google::protobuf::RepeatedPtrField<v1::Stage>& stages);

// The same for a stored run: nullopt without a stopped item (no read beyond `run`'s counts).
Result<std::optional<v1::EarlyStopSaving>> EarlyStopSavingOfRun(store::SqliteStore* store,
                                                                const v1::Run& run);

// What the items `plan` stops (action "stop") save, priced at plan.reference_run's items that
// finished there: each as an item that did no step. nullopt without such an item, or with
// nothing to price a step with.
Result<std::optional<v1::EarlyStopSaving>> EarlyStopSavingOfPlan(store::SqliteStore* store,
                                                                 const workflow::Workflow& wf,
                                                                 const scheduler::RunPlan& plan);

}  // namespace longhaul::rpc

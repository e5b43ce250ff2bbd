// A sweep whose `early_stop` rule changed since the run a plan compares with (docs/sweeps.md,
// "Changing the rule"): the new rule judges the items again from the values the earlier run
// stored, at submission, instead of running them again to find out.
#pragma once

#include "core/status.h"
#include "daemon/scheduler/planner.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::scheduler {

// For each foreach stage of `wf` whose `early_stop` differs from the one of the same stage in
// plan->reference_run (or which had none there), the items whose key is the one of the
// reference's item of that name and that ended there succeeded, cached or stopped early are
// judged by the new rule on their stored values, in the order they were stored:
//
//   stopped by it   action "stop" ("stopped by the new rule at rung 2 (step 2): ..."): the
//                   item ends stopped_early at submission and runs nothing; its dependents
//                   that would have been reused run again (and are skipped there when they
//                   need only stopped items).
//   kept, finished  reused as before, the reason saying why the rule keeps it.
//   kept, stopped   runs ("kept by the new rule: ...; stopped early in run N"): its stored
//   there           values count as its own, so the rungs they passed are not judged again.
//
// Each of these items gets StagePlan::judged_from, the stage whose values it was judged on.
// Items with another key (something else changed) are planned as before and judged as they
// run. A reference whose workflow text does not parse changes nothing.
Status RejudgeSweeps(store::SqliteStore* store, const workflow::Workflow& wf, RunPlan* plan);

// Whether two rules judge alike (the fields each rule uses).
bool SameEarlyStopRule(const workflow::EarlyStopSpec& a, const workflow::EarlyStopSpec& b);

}  // namespace longhaul::scheduler

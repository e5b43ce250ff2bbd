// Changing a run's priority class after submission (docs/scheduling.md, "Changing a run's
// class"). The ready queue orders by class first, and an entry's class is part of its key: the
// run's queued stages leave it under the old class and come back under the new one.
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/workflow/run_policy.h"

namespace longhaul::scheduler {

Result<v1::Run> Scheduler::SetRunPriority(int64_t run_id, const std::string& priority) {
  RETURN_IF_ERROR(workflow::CheckPriorityClass(priority, "priority"));
  RunState* run = runs_.Find(run_id);
  if (run == nullptr) {
    RETURN_IF_ERROR(store_->GetRun(run_id, false).status());
    return absl::FailedPreconditionError(
        StrCat("run ", run_id, " has ended: its class no longer matters"));
  }
  if (run->row.priority == priority) return SnapshotRun(*run, StageSet::kFirstPage);
  RETURN_IF_ERROR(store_->UpdateRunPriority(run_id, priority));
  // Only the stages in the queue move: a stage its budget holds back is added again, with the
  // new class, when the budget is raised.
  std::vector<StageState*> queued;
  for (auto& s : run->stages) {
    if (s->row.status != v1::STAGE_READY) continue;
    ReadyQueue::Entry old = ReadyEntryOf(s.get());
    if (!ready_.Contains(old, s->row.resources, PlacementKey(s.get()))) continue;
    ready_.Remove(old, s->row.resources, PlacementKey(s.get()));
    queued.push_back(s.get());
  }
  GetLogger("scheduler")
      ->info("run {}: class {} -> {} ({} waiting stages move)", run_id, run->row.priority, priority,
             queued.size());
  run->row.priority = priority;
  for (StageState* s : queued) ready_.Add(ReadyEntryOf(s), s->row.resources, PlacementKey(s));
  dispatch_needed_ = true;
  return SnapshotRun(*run, StageSet::kFirstPage);
}

}  // namespace longhaul::scheduler

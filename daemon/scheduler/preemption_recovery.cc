// Preemptions in flight across a longhauld restart (docs/scheduling.md, "How a preempted attempt
// stops and comes back"): the stop is stored on its victim (AttemptRow::stop_kind, stop_reason,
// stop_for_stage_id) with the batch that sends it, and recovery gives it back to the victim
// (BuildRunState) and rebuilds from it the book of what each waiting stage waits for (here).
#include <map>
#include <string>
#include <vector>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {

void Scheduler::RecoverPreemptions() {
  struct Rebuilt {
    PreemptionBook::Pending pending;
    std::vector<std::string> texts;
    std::string waiting;
  };
  // By attempt id, the order they were made in: a stage's victims are named in a stable order.
  std::map<int64_t, AttemptState*> victims;
  for (const auto& [id, a] : runs_.live_attempts()) {
    if (a->kill_reason == "preempted" && a->row.stop_for_stage_id && a->stage != nullptr) {
      victims.emplace(id, a);
    }
  }
  std::map<PreemptionBook::StageKey, Rebuilt> by_stage;
  for (const auto& [id, a] : victims) {
    int64_t for_id = *a->row.stop_for_stage_id;
    RunState* run = runs_.OwnerOfStage(for_id);
    StageState* waiting = nullptr;
    if (run != nullptr) {
      for (const auto& st : run->stages) {
        if (st->row.id == for_id) waiting = st.get();
      }
    }
    // The stage it was stopped for has ended, runs, or waits for something else: the victim
    // still ends preempted, and no stage holds its room.
    if (waiting == nullptr || waiting->row.status != v1::STAGE_READY) continue;
    Rebuilt& r = by_stage[{run->row.id, waiting->index}];
    if (!r.pending.victims.empty() && r.pending.agent_id != a->row.agent_id) continue;
    r.pending.agent_id = a->row.agent_id;
    r.waiting = PreemptStageText(*waiting);
    r.pending.victims.insert(id);
    r.texts.push_back(PreemptStageText(*a->stage));
  }
  auto log = GetLogger("scheduler");
  for (auto& [key, r] : by_stage) {
    r.pending.text = StrJoin(r.texts, ", ");
    log->info("{} still waits for {} on {} to stop (asked before the restart)", r.waiting,
              r.pending.text, r.pending.agent_id);
    preemptions_.Add(key, std::move(r.pending));
  }
}

}  // namespace longhaul::scheduler

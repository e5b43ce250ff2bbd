// The batch boundary: write what changed, then act on it once it is durable.

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {

Status Scheduler::FlushToStore() {
  RETURN_IF_ERROR(FlushGpus());
  for (RunState* r : batch_.dirty_runs) {
    RETURN_IF_ERROR(store_->UpdateRun(r->row));
    r->dirty = false;
  }
  batch_.dirty_runs.clear();
  for (StageState* s : batch_.dirty_stages) {
    RETURN_IF_ERROR(store_->UpdateStage(s->row));
    s->dirty = false;
  }
  batch_.dirty_stages.clear();
  for (AttemptState* a : batch_.dirty_attempts) {
    CountGpuUse(a);
    RETURN_IF_ERROR(store_->UpdateAttempt(a->row));
    a->dirty = false;
  }
  batch_.dirty_attempts.clear();
  // After the attempts: their GPU use goes into their runs' totals.
  for (RunState* r : batch_.dirty_totals) {
    store::RunTotals totals;
    for (int st = 0; st < v1::StageStatus_ARRAYSIZE; ++st) {
      if (r->status_count[st] == 0) continue;
      totals.stage_counts[std::string(StageStatusName(static_cast<v1::StageStatus>(st)))] =
          r->status_count[st];
    }
    totals.gpu_ms_ended = r->gpu.ended_ms;
    totals.gpus_running = r->gpu.running;
    totals.gpu_start_ms_running = r->gpu.start_ms;
    RETURN_IF_ERROR(store_->UpdateRunTotals(r->row.id, totals));
    r->totals_dirty = false;
  }
  batch_.dirty_totals.clear();
  for (AgentState* a : batch_.dirty_agents) {
    RETURN_IF_ERROR(store_->UpsertAgent(a->row));
    a->dirty = false;
  }
  batch_.dirty_agents.clear();
  for (const auto& [attempt_id, env] : batch_.environments) {
    RETURN_IF_ERROR(store_->PutAttemptEnvironment(attempt_id, env));
  }
  batch_.environments.clear();
  for (const auto& [agent_id, v] : batch_.engine_versions) {
    RETURN_IF_ERROR(
        store_->PutAgentEngineVersion(agent_id, v.profile(), v.version(), v.checked_at_ms()));
  }
  batch_.engine_versions.clear();
  return FlushNotices();
}

size_t Scheduler::AfterCommit() {
  for (auto& [session, msg] : batch_.outbox) link_->Send(session, msg);
  batch_.outbox.clear();
  std::vector<std::function<void()>> callbacks;
  callbacks.swap(batch_.after_commit);
  for (auto& cb : callbacks) cb();
  if (!batch_.recorded.empty()) {
    if (metrics_ != nullptr) {
      for (const auto& row : batch_.recorded) metrics_->notifications.Add(row.kind, "pending");
    }
    notifier_->Enqueue(std::move(batch_.recorded));
    batch_.recorded.clear();
  }

  for (int64_t run_id : batch_.changed_runs) {
    RunState* run = runs_.Find(run_id);
    if (run == nullptr) continue;
    auto w = watchers_.find(run_id);
    if (w != watchers_.end()) {
      v1::RunUpdate update;
      *update.mutable_run() = SnapshotRun(*run, StageSet::kChanged);
      bool final = IsTerminal(run->row.status);
      auto& list = w->second;
      for (auto& watcher : list) watcher->Push(update, final);
      list.erase(std::remove_if(list.begin(), list.end(),
                                [final](const auto& x) { return final || x->cancelled(); }),
                 list.end());
      if (list.empty()) watchers_.erase(w);
    }
    run->changed_stages.clear();
  }
  batch_.changed_runs.clear();
  ReleaseEndedAttempts();

  size_t evicted_stages = 0;
  for (int64_t run_id : batch_.ended_runs) {
    RunState* run = runs_.Find(run_id);
    if (run == nullptr || !IsTerminal(run->row.status)) continue;
    evicted_stages += run->stages.size();
    auto w = watchers_.find(run_id);
    if (w != watchers_.end()) {
      v1::RunUpdate update;
      *update.mutable_run() = SnapshotRun(*run, StageSet::kChanged);
      for (auto& watcher : w->second) watcher->Push(update, true);
      watchers_.erase(w);
    }
    runs_.Remove(run_id);
  }
  batch_.ended_runs.clear();
  return evicted_stages;
}

void Scheduler::ShrinkToFit() {
  // Tables and lists sized for a big run keep their capacity when emptied: size them to what
  // is left (sent and emptied by now, the outbox held the run's busiest batch).
  runs_.ShrinkIndexes();
  batch_.dirty_stages.shrink_to_fit();
  batch_.dirty_attempts.shrink_to_fit();
  batch_.ended_attempts.shrink_to_fit();
  batch_.outbox.shrink_to_fit();
  store_->ReleaseMemory();
}

void Scheduler::ReleaseEndedAttempts() {
  for (AttemptState* a : batch_.ended_attempts) {
    StageState* s = a->stage;
    if (s == nullptr || s->current == a || a->dirty) continue;  // still needed: kept
    if (a->row.started_at_ms) {
      int64_t end = a->row.ended_at_ms.value_or(*a->row.started_at_ms);
      s->ended_wall_ms += std::max<int64_t>(0, end - *a->row.started_at_ms);
    }
    std::erase_if(s->attempts, [a](const auto& p) { return p.get() == a; });
  }
  batch_.ended_attempts.clear();
}

void Scheduler::DropStaticColumns(store::StageRow* row) {
  row->fingerprint_json.clear();
  std::vector<std::string>().swap(row->needs);
  row->description.clear();
}

}  // namespace longhaul::scheduler

#include "daemon/scheduler/run_table.h"

#include <utility>

namespace longhaul::scheduler {

RunState* RunTable::Find(int64_t run_id) const {
  auto it = runs_.find(run_id);
  return it == runs_.end() ? nullptr : it->second.get();
}

StageState* RunTable::StageAt(int64_t run_id, int index) const {
  return runs_.at(run_id)->stages[static_cast<size_t>(index)].get();
}

RunState* RunTable::Add(std::unique_ptr<RunState> run) {
  RunState* r = run.get();
  for (const auto& st : r->stages) stage_owner_[st->row.id] = r;
  runs_[r->row.id] = std::move(run);
  return r;
}

void RunTable::Remove(int64_t run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  for (const auto& s : it->second->stages) {
    stage_owner_.erase(s->row.id);
    for (const auto& a : s->attempts) attempts_.erase(a->row.id);
  }
  runs_.erase(it);
}

void RunTable::ShrinkIndexes() {
  stage_owner_.rehash(0);
  attempts_.rehash(0);
}

void RunTable::IndexStage(const StageState& s) { stage_owner_[s.row.id] = s.run; }

RunState* RunTable::OwnerOfStage(int64_t stage_id) const {
  auto it = stage_owner_.find(stage_id);
  return it == stage_owner_.end() ? nullptr : it->second;
}

void RunTable::AddLiveAttempt(AttemptState* a) { attempts_[a->row.id] = a; }

void RunTable::RemoveLiveAttempt(int64_t attempt_id) { attempts_.erase(attempt_id); }

AttemptState* RunTable::FindAttempt(int64_t attempt_id) const {
  auto it = attempts_.find(attempt_id);
  return it == attempts_.end() ? nullptr : it->second;
}

AttemptState* RunTable::FindAnyAttempt(int64_t attempt_id) const {
  if (AttemptState* a = FindAttempt(attempt_id)) return a;
  for (const auto& [id, run] : runs_) {
    for (const auto& s : run->stages) {
      for (const auto& a : s->attempts) {
        if (a->row.id == attempt_id) return a.get();
      }
    }
  }
  return nullptr;
}

}  // namespace longhaul::scheduler

#include "daemon/scheduler/ready_queue.h"

namespace longhaul::scheduler {

void ReadyQueue::Add(Entry e, const v1::Resources& need, const std::string& placement) {
  Shape shape = ShapeOf(need, placement);
  absl::btree_set<Entry>& bucket = by_shape_[shape];
  bool was_head = bucket.empty() || e < *bucket.begin();
  if (!bucket.insert(e).second) return;
  ++size_;
  if (need.gpus() > 0) ++gpu_runs_[e.run_id];
  if (in_pass_ && was_head && !full_.count(shape)) frontier_.insert({e, shape});
}

void ReadyQueue::Remove(Entry e, const v1::Resources& need, const std::string& placement) {
  auto it = by_shape_.find(ShapeOf(need, placement));
  if (it == by_shape_.end() || it->second.erase(e) == 0) return;
  --size_;
  if (need.gpus() > 0) ForgetGpuEntry(e.run_id);
  if (it->second.empty()) by_shape_.erase(it);
}

bool ReadyQueue::Contains(Entry e, const v1::Resources& need, const std::string& placement) const {
  auto it = by_shape_.find(ShapeOf(need, placement));
  return it != by_shape_.end() && it->second.count(e) > 0;
}

std::vector<ReadyQueue::Entry> ReadyQueue::Behind(Entry after, const v1::Resources& need,
                                                  const std::string& placement, size_t n) const {
  std::vector<Entry> out;
  auto it = by_shape_.find(ShapeOf(need, placement));
  if (it == by_shape_.end()) return out;
  for (auto e = it->second.upper_bound(after); e != it->second.end() && out.size() < n; ++e) {
    out.push_back(*e);
  }
  return out;
}

void ReadyQueue::Clear() {
  by_shape_.clear();
  gpu_runs_.clear();
  size_ = 0;
}

void ReadyQueue::ForgetGpuEntry(int64_t run_id) {
  auto it = gpu_runs_.find(run_id);
  if (it != gpu_runs_.end() && --it->second <= 0) gpu_runs_.erase(it);
}

void ReadyQueue::Rekey(const std::function<int(const Entry&)>& share_of) {
  for (auto& [shape, bucket] : by_shape_) {
    absl::btree_set<Entry> moved;
    for (Entry e : bucket) {
      e.share = share_of(e);
      moved.insert(e);
    }
    bucket = std::move(moved);
  }
}

void ReadyQueue::Pass(const std::function<Outcome(Entry)>& place) {
  in_pass_ = true;
  frontier_.clear();
  full_.clear();
  for (const auto& [shape, bucket] : by_shape_) frontier_.insert({*bucket.begin(), shape});
  while (!frontier_.empty()) {
    auto [queued, shape] = *frontier_.begin();
    frontier_.erase(frontier_.begin());
    auto it = by_shape_.find(shape);
    if (it == by_shape_.end() || full_.count(shape)) continue;
    // The shape's first entry from where the pass stands in it (entries may have come and gone
    // since it was queued; those skipped stay before it).
    auto at = skipped_.count(shape) ? it->second.lower_bound(queued) : it->second.begin();
    if (at == it->second.end()) continue;
    Entry head = *at;
    Outcome outcome = place(head);
    if (outcome == Outcome::kNoRoom) {
      full_.insert(shape);
      continue;
    }
    it = by_shape_.find(shape);
    if (it == by_shape_.end()) continue;
    if (outcome == Outcome::kTaken) {
      // `place` normally removed it (the stage left the ready state); make sure.
      if (it->second.erase(head) > 0) {
        --size_;
        if (std::get<2>(shape) > 0) ForgetGpuEntry(head.run_id);
      }
      if (it->second.empty()) {
        by_shape_.erase(it);
        continue;
      }
    }
    if (outcome == Outcome::kSkip) skipped_.insert(shape);
    // Without a skip, the shape's oldest again (a stage made ready meanwhile is offered too).
    auto next = skipped_.count(shape) ? it->second.upper_bound(head) : it->second.begin();
    if (next != it->second.end()) frontier_.insert({*next, shape});
  }
  in_pass_ = false;
  frontier_.clear();
  full_.clear();
  skipped_.clear();
}

}  // namespace longhaul::scheduler

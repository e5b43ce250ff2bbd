// The ready set: stages whose dependencies allow them to run, waiting for an agent with room.
//
// Kept per shape (what one attempt of the stage asks for: CPUs, memory, GPUs, and where it may
// go: its placement key, "" for "any agent"), each shape in order by (class rank, fair-share
// position, run id, stage index): a run's priority class first (0 high, 1 normal, 2 low;
// docs/scheduling.md), then its account's place in the fair-share order (0 without fair
// share), then FIFO by age. A dispatch pass visits stages in that order (most urgent, then oldest
// first) across shapes; once a stage of some shape does not fit on any agent, the other stages of
// that shape are skipped for the rest of the pass, since nothing is freed during a pass and they
// ask for exactly as much. A pass therefore costs O((started + shapes) log n) whatever the number
// of ready stages: with 100,000 ready stages and full agents it looks at one stage per shape, not
// at all of them.
//
// Thread-safety: none (the scheduler's loop thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/btree_set.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::scheduler {

class ReadyQueue {
 public:
  struct Entry {
    int64_t run_id = 0;
    int index = 0;  // the stage's index in its run
    int rank = 1;   // its run's priority class (workflow::PriorityRank): leads the order
    int share = 0;  // its run's fair-share position (RunState::share_pos): next in the order
    auto operator<=>(const Entry& o) const {
      return std::tie(rank, share, run_id, index) <=> std::tie(o.rank, o.share, o.run_id, o.index);
    }
    bool operator==(const Entry&) const = default;
  };
  enum class Outcome {
    kTaken,   // the stage left the ready set (started, or failed to start)
    kNoRoom,  // no agent has room for it: skip its shape for the rest of the pass
    kSkip,    // not this one (it is not its turn, or it waits for something other than room):
              // it stays, and the next of its shape is offered
  };

  // Adding an entry already present, or removing one that is absent, does nothing. `need`,
  // `placement` and the entry's rank must be what the stage had when it was added. Stages that may
  // go to different agents (node selectors, avoided agents) must have different placement keys.
  void Add(Entry e, const v1::Resources& need, const std::string& placement = "");
  void Remove(Entry e, const v1::Resources& need, const std::string& placement = "");
  bool Contains(Entry e, const v1::Resources& need, const std::string& placement = "") const;
  // Up to `n` entries of the shape after `after`, in order (for wait reasons: who stands behind
  // a shape's head, which a pass does not visit). O(n + log size).
  std::vector<Entry> Behind(Entry after, const v1::Resources& need, const std::string& placement,
                            size_t n) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t shapes() const { return by_shape_.size(); }
  void Clear();
  // Gives every entry the share `share_of` says (its other fields stay): when the fair-share
  // order changed. O(n log n); not during a pass.
  void Rekey(const std::function<int(const Entry&)>& share_of);
  // The runs with entries that ask for GPUs, and how many each has.
  const std::map<int64_t, int64_t>& gpu_runs() const { return gpu_runs_; }

  // Offers ready stages to `place`, most urgent class first and oldest first within a class,
  // as described above. `place` may add and
  // remove entries (a stage that cannot start fails and skips its dependents, which leave the
  // set; a stage made ready meanwhile is offered in the same pass when its shape still has
  // room). An entry `place` answers kNoRoom or kSkip for stays in the set; kSkip costs
  // O(log n) an entry skipped.
  void Pass(const std::function<Outcome(Entry)>& place);

 private:
  using Shape = std::tuple<double, int64_t, int32_t, std::string>;  // cpus, memory, GPUs, key
  void ForgetGpuEntry(int64_t run_id);
  static Shape ShapeOf(const v1::Resources& r, const std::string& placement) {
    return {r.cpus(), r.memory_bytes(), r.gpus(), placement};
  }
  // A B-tree per shape: about 20 bytes an entry, where a std::set node costs 64.
  std::map<Shape, absl::btree_set<Entry>> by_shape_;
  size_t size_ = 0;
  // During a pass: shapes to visit, by their oldest entry, and shapes found full.
  bool in_pass_ = false;
  std::set<std::pair<Entry, Shape>> frontier_;
  std::set<Shape> full_;
  std::set<Shape> skipped_;  // shapes where the pass skipped an entry: it walks on from there
  std::map<int64_t, int64_t> gpu_runs_;
};

}  // namespace longhaul::scheduler

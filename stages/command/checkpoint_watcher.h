// Finds the checkpoints an external command writes, by a glob pattern (glob(3): `epoch_*`,
// `ckpt/step-*`) matched in a directory, and says when each new one is complete enough to
// report: when its size and modification time did not change between two polls (a
// checkpoint being written keeps growing), or when the command has ended.
//
// Checkpoints are ordered by name with numbers compared as numbers (epoch_9 < epoch_10); the
// step reported with one is the last number in its name, if any. Matches present when the
// watcher was created (an earlier attempt's) are known, not reported again.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace longhaul::command {

struct Checkpoint {
  std::string path;
  std::optional<int64_t> step;
};

// Natural order: runs of digits compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b);
// The last run of digits in the final path component ("ckpt/epoch_12" -> 12).
std::optional<int64_t> StepOf(const std::string& path);

class CheckpointWatcher {
 public:
  // `pattern` relative to `dir` (or absolute). An empty pattern watches nothing.
  CheckpointWatcher(std::string dir, std::string pattern);

  // Every current match, in natural order.
  std::vector<std::string> List() const;
  std::optional<std::string> Newest() const;
  // Matches that became stable since the last poll and were not reported yet, in order.
  std::vector<Checkpoint> Poll();
  // Everything not reported yet (the command has ended: nothing is still being written).
  std::vector<Checkpoint> Final();

 private:
  struct Signature {
    uint64_t bytes = 0, files = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Signature&) const = default;
  };
  static Signature Sign(const std::string& path);
  std::vector<Checkpoint> Take(bool all);

  std::string dir_, pattern_;
  std::set<std::string> reported_;
  std::map<std::string, Signature> seen_;  // last poll's signature of unreported matches
};

}  // namespace longhaul::command

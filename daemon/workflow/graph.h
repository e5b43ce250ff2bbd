// Internal to longhaul_workflow: the `needs` graph. Stages are indices 0..n-1 in file order;
// needs[i] lists the indices stage i needs (unknown names and self-edges already removed).
#pragma once

#include <cstdint>
#include <vector>

namespace longhaul::workflow {

using NeedsGraph = std::vector<std::vector<int>>;

// None of these recurse: a chain of 200,000 stages is as safe as a diamond.

// One cycle per strongly connected component that has one, each as the stages along it
// ("a needs b needs c needs a" is {a, b, c}), starting at the component's first stage in file
// order and taking the shortest way back to it. Components are ordered by that first stage.
std::vector<std::vector<int>> FindCycles(const NeedsGraph& needs);

// Every stage after all it needs; among stages ready at the same time, file order first.
// REQUIRES: the graph has no cycle.
std::vector<int> TopologicalOrder(const NeedsGraph& needs);

// Answers "does stage `from` need `target`, directly or indirectly?" with a search that stops
// at the answer. Memory is O(stages) whatever the number of questions (a table of every
// stage's upstream would be O(stages^2) for a chain). Safe on cyclic graphs. Holds a
// reference to `needs`, which must outlive it.
class Reachability {
 public:
  explicit Reachability(const NeedsGraph& needs);
  bool Needs(int from, int target);

 private:
  const NeedsGraph& needs_;
  std::vector<uint32_t> seen_;  // == epoch_: visited by the current question
  uint32_t epoch_ = 0;
  std::vector<int> todo_;
};

}  // namespace longhaul::workflow

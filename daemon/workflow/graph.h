// Internal to longhaul_workflow: the `needs` graph. Stages are indices 0..n-1 in file order;
// needs[i] lists the indices stage i needs (unknown names and self-edges already removed).
#pragma once

#include <set>
#include <vector>

namespace longhaul::workflow {

using NeedsGraph = std::vector<std::vector<int>>;

// One cycle per strongly connected component that has one, each as the stages along it
// ("a needs b needs c needs a" is {a, b, c}), starting at the component's first stage in file
// order and taking the shortest way back to it. Components are ordered by that first stage.
std::vector<std::vector<int>> FindCycles(const NeedsGraph& needs);

// Every stage after all it needs; among stages ready at the same time, file order first.
// REQUIRES: the graph has no cycle.
std::vector<int> TopologicalOrder(const NeedsGraph& needs);

// For each stage, every stage it needs directly or indirectly. Safe on cyclic graphs.
std::vector<std::set<int>> TransitiveNeeds(const NeedsGraph& needs);

}  // namespace longhaul::workflow

#include "daemon/workflow/graph.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>

namespace longhaul::workflow {
namespace {

// Tarjan's algorithm with an explicit stack; returns the component id of each node.
std::vector<int> StronglyConnected(const NeedsGraph& g, int* count) {
  const int n = static_cast<int>(g.size());
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  std::vector<std::pair<int, size_t>> calls;  // node, next edge to follow
  int next_index = 0;
  *count = 0;
  for (int root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    calls.emplace_back(root, 0);
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!calls.empty()) {
      auto& [v, edge] = calls.back();
      if (edge < g[v].size()) {
        int w = g[v][edge++];
        if (index[w] < 0) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = true;
          calls.emplace_back(w, 0);  // invalidates v and edge
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      int done = v;
      calls.pop_back();
      if (!calls.empty()) {
        int parent = calls.back().first;
        low[parent] = std::min(low[parent], low[done]);
      }
      if (low[done] == index[done]) {
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = *count;
        } while (w != done);
        ++*count;
      }
    }
  }
  return comp;
}

}  // namespace

std::vector<std::vector<int>> FindCycles(const NeedsGraph& g) {
  const int n = static_cast<int>(g.size());
  int count = 0;
  std::vector<int> comp = StronglyConnected(g, &count);
  std::vector<int> size(count, 0);
  for (int v = 0; v < n; ++v) ++size[comp[v]];
  std::vector<bool> done(count, false);
  std::vector<std::vector<int>> cycles;
  // Shared by every component's search; each resets what it touched.
  std::vector<int> parent(n, -1);
  std::vector<bool> seen(n, false);
  std::vector<int> touched;
  for (int start = 0; start < n; ++start) {
    int c = comp[start];
    if (done[c] || size[c] < 2) continue;
    done[c] = true;
    // Breadth-first from `start` inside its component, back to `start`: the shortest cycle
    // through it, which is the easiest one to read.
    std::deque<int> queue = {start};
    seen[start] = true;
    touched.push_back(start);
    int last = -1;
    while (!queue.empty() && last < 0) {
      int v = queue.front();
      queue.pop_front();
      for (int w : g[v]) {
        if (comp[w] != c) continue;
        if (w == start) {
          last = v;
          break;
        }
        if (!seen[w]) {
          seen[w] = true;
          parent[w] = v;
          touched.push_back(w);
          queue.push_back(w);
        }
      }
    }
    std::vector<int> cycle;
    for (int v = last; v != -1; v = parent[v]) cycle.push_back(v);
    std::reverse(cycle.begin(), cycle.end());
    cycles.push_back(std::move(cycle));
    for (int v : touched) {
      seen[v] = false;
      parent[v] = -1;
    }
    touched.clear();
  }
  return cycles;
}

std::vector<int> TopologicalOrder(const NeedsGraph& g) {
  const int n = static_cast<int>(g.size());
  std::vector<int> missing(n, 0);
  std::vector<std::vector<int>> dependents(n);
  for (int v = 0; v < n; ++v) {
    for (int w : g[v]) {
      ++missing[v];
      dependents[w].push_back(v);
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int v = 0; v < n; ++v) {
    if (missing[v] == 0) ready.push(v);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int d : dependents[v]) {
      if (--missing[d] == 0) ready.push(d);
    }
  }
  return order;
}

Reachability::Reachability(const NeedsGraph& needs)
    : needs_(needs), seen_(needs.size(), 0) {}

bool Reachability::Needs(int from, int target) {
  if (++epoch_ == 0) {  // wrapped: forget every old mark
    std::fill(seen_.begin(), seen_.end(), 0);
    epoch_ = 1;
  }
  const std::vector<int>& direct = needs_[from];
  if (std::find(direct.begin(), direct.end(), target) != direct.end()) return true;
  todo_.assign(direct.begin(), direct.end());
  while (!todo_.empty()) {
    int w = todo_.back();
    todo_.pop_back();
    if (w == target) return true;
    if (seen_[w] == epoch_) continue;
    seen_[w] = epoch_;
    todo_.insert(todo_.end(), needs_[w].begin(), needs_[w].end());
  }
  return false;
}

}  // namespace longhaul::workflow

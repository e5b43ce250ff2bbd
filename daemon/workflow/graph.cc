#include "daemon/workflow/graph.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>

namespace longhaul::workflow {
namespace {

// Tarjan's algorithm; returns the component id of each node.
std::vector<int> StronglyConnected(const NeedsGraph& g, int* count) {
  const int n = static_cast<int>(g.size());
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1), stack;
  std::vector<bool> on_stack(n, false);
  int next_index = 0;
  *count = 0;
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = next_index++;
    stack.push_back(v);
    on_stack[v] = true;
    for (int w : g[v]) {
      if (index[w] < 0) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] == index[v]) {
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = false;
        comp[w] = *count;
      } while (w != v);
      ++*count;
    }
  };
  for (int v = 0; v < n; ++v) {
    if (index[v] < 0) visit(v);
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
  for (int start = 0; start < n; ++start) {
    int c = comp[start];
    if (done[c] || size[c] < 2) continue;
    done[c] = true;
    // Breadth-first from `start` inside its component, back to `start`: the shortest cycle
    // through it, which is the easiest one to read.
    std::vector<int> parent(n, -1);
    std::deque<int> queue = {start};
    std::vector<bool> seen(n, false);
    seen[start] = true;
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
          queue.push_back(w);
        }
      }
    }
    std::vector<int> cycle;
    for (int v = last; v != -1; v = parent[v]) cycle.push_back(v);
    std::reverse(cycle.begin(), cycle.end());
    cycles.push_back(std::move(cycle));
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

std::vector<std::set<int>> TransitiveNeeds(const NeedsGraph& g) {
  const int n = static_cast<int>(g.size());
  std::vector<std::set<int>> out(n);
  for (int v = 0; v < n; ++v) {
    std::vector<int> todo(g[v].begin(), g[v].end());
    while (!todo.empty()) {
      int w = todo.back();
      todo.pop_back();
      if (!out[v].insert(w).second) continue;
      todo.insert(todo.end(), g[w].begin(), g[w].end());
    }
  }
  return out;
}

}  // namespace longhaul::workflow

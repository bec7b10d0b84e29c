// Task 3's answer, by counting consumers (Kahn's algorithm); autograd/engine.cpp does a depth-first
// post-order instead. Both are loops over a worklist, so a long chain needs no C++ stack.
#include "exercises/03_topological_order.h"

#include <algorithm>
#include <unordered_map>

namespace minigrad::exercises {

std::vector<Node*> topological_order(const Variable& root) {
  Node* const last = root.grad_fn().get();
  if (last == nullptr) return {};
  // Every node reachable from the root, with the number of edges into it from other reachable nodes: a
  // value used twice counts twice.
  std::unordered_map<Node*, int> consumers{{last, 0}};
  std::vector<Node*> to_visit{last};
  while (!to_visit.empty()) {
    Node* node = to_visit.back();
    to_visit.pop_back();
    for (const Edge& edge : node->inputs) {
      if (!edge.node) continue;
      const auto [entry, added] = consumers.try_emplace(edge.node.get(), 0);
      ++entry->second;
      if (added) to_visit.push_back(edge.node.get());
    }
  }
  // Consumers first: a node is placed once every edge into it has been, which is the reverse of the
  // order asked for.
  std::vector<Node*> order{last};
  for (size_t i = 0; i < order.size(); ++i) {
    for (const Edge& edge : order[i]->inputs) {
      if (edge.node && --consumers[edge.node.get()] == 0) order.push_back(edge.node.get());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace minigrad::exercises

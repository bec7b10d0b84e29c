// Task 3: the order in which backward() visits the graph. You write exercises/03_topological_order.cpp.
#pragma once

#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// Every node reachable from root.grad_fn(), once each, each after the nodes that computed its inputs
// (so root's node is last). Empty for a leaf.
std::vector<Node*> topological_order(const Variable& root);

}  // namespace minigrad::exercises

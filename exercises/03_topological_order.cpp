// Task 3: the topological order backward() walks in reverse.
//
// Each op recorded a Node (autograd/graph.h): root.grad_fn() is the node that computed root, and
// node->inputs[i].node is the node that computed its input i (null for a leaf or a constant). backward()
// runs each node's backward function after every node that consumes its output has added its share of
// the gradient; a node must therefore come after the nodes of its inputs in this order, and the walk
// goes through it in reverse.
//
// To get right:
//   - a value used twice (h * h, or h in two places) is reached along two edges: list its node once;
//   - walk with a loop and a std::vector as the stack, not recursion: a chain of 100,000 ops would
//     overflow the C++ stack;
//   - a leaf root (no grad_fn) gives an empty order.
// Two ways work: a depth-first post-order (push a node after all its inputs' nodes), or counting each
// node's consumers and releasing a node once all of them are placed (Kahn's algorithm), then reversing.
//
// The real one: topological_order in autograd/engine.cpp (step 1 of the backward pass).
// Check it: scripts/exercises.sh 3
#include "exercises/03_topological_order.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

std::vector<Node*> topological_order([[maybe_unused]] const Variable& root) {
  throw NotWritten("task 3, topological_order");
}

}  // namespace minigrad::exercises

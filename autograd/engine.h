// The backward engine (autograd/engine.cpp): what Variable::backward and grad() call.
#pragma once

#include <functional>
#include <vector>

#include "autograd/graph.h"

namespace minigrad {

// Seeds `root` with `grad` (undefined: 1 for a one-element root) and accumulates into the leaves' .grad.
void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options);

namespace detail {

// What a backward pass does with the gradients that reach their destinations.
struct Sinks {
  std::function<void(VariableImpl& leaf, Variable g)> leaf;                       // a leaf that requires grad
  std::function<void(const Node& node, const Variable& total)> node_output = {};  // before `node` runs
};

// Steps 1 to 3 of a backward pass from `roots`, each seeded with its gradient (engine.cpp).
void backpropagate(const std::vector<Node*>& roots, std::vector<Variable> seeds, bool retain_graph,
                   const Sinks& sinks);
// The checked upstream gradient of `root`: `grad`, or 1 for a one-element root.
Tensor seed_for(const Variable& root, const Tensor& grad);
// Throws unless `root` is defined and requires grad.
void check_root(const Variable& root);
// The gradient waiting at a node receives one more consumer's share (out of place).
void add_into(Variable& total, Variable g);
// A gradient for `value` as a gradient for its node's whole output: itself, or, for a part of the output
// (unbind's pieces), zeros with g in that part.
Variable whole_output_gradient(const VariableImpl& value, Variable g);

}  // namespace detail

}  // namespace minigrad

// The backward engine (autograd/engine.cpp): what Variable::backward and grad() call.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "minigrad/autograd/graph.h"

namespace minigrad {

// Seeds `root` with `grad` (undefined: 1 for a one-element root) and accumulates into the leaves' .grad.
void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options);

namespace detail {

// ---- engine.cpp: the first-order pass ----

// What a backward pass does with the gradients that reach their destinations.
struct Sinks {
  std::function<void(VariableImpl& leaf, Variable g)> leaf;                       // a leaf that requires grad
  std::function<void(const Node& node, const Variable& total)> node_output = {};  // before `node` runs
};

// Steps 1 and 2 of a backward pass from `roots`, each seeded with its gradient.
void backpropagate(const std::vector<Node*>& roots, std::vector<Variable> seeds, bool retain_graph,
                   const Sinks& sinks);
// The gradient waiting at a node receives one more consumer's share (in place when nothing else holds it).
void add_into(Variable& total, Variable g);

// ---- backward_checks.cpp: the errors a backward pass raises ----

// Throws unless `root` is defined and requires grad, and `grad` is undefined for a one-element root or
// has the root's shape and dtype.
void check_backward_call(const Variable& root, const Tensor& grad);
// Throws the error for a node whose graph an earlier backward() freed.
[[noreturn]] void throw_freed(const Node& node);
// Throws unless a backward function returned one gradient per input, each (where defined and needed) of
// its input's shape and dtype; called before any of them is accumulated, so a wrong one leaves nothing
// half-done.
void check_gradients(const Node& node, const VariableGrads& grads);

// ---- backward_with_graph.cpp: backward({.create_graph = true}) ----

// run_backward when the gradients must carry a graph of their own: the same walk with grad mode on.
void run_backward_with_graph(const Variable& root, const Tensor& seed);

// ---- hooks.cpp: register_hook and retain_grad ----

// The gradient of `node`'s output after the hooks registered on the Variables it computed.
Variable run_output_hooks(const Node& node, Variable total);
// Whether a leaf has hooks. Its gradients in a pass are summed first (add_leaf_gradient), so that its
// hooks see the total once; after_leaf_hooks gives the total after them (unchanged without hooks).
inline bool has_hooks(const VariableImpl& leaf) {
  return leaf.extras && leaf.extras->hooks && !leaf.extras->hooks->hooks.empty();
}
using HookedLeaves = std::vector<std::pair<VariableImpl*, Variable>>;
void add_leaf_gradient(HookedLeaves& leaves, VariableImpl* leaf, Variable g);
Variable after_leaf_hooks(const VariableImpl& leaf, Variable total);

// ---- output_parts.cpp: the pieces of unbind's output ----

// A gradient for `value` as a gradient for its node's whole output: itself, or, for a part of the output
// (unbind's pieces), zeros with g in that part.
Variable whole_output_gradient(const VariableImpl& value, Variable g);
// Adds a consumer's gradient `g` for one part of `node`'s output into the gradient waiting there.
void add_part_into(Variable& waiting, const Node& node, OutputPart part, const Variable& g);

}  // namespace detail

}  // namespace minigrad

// The backward pass: how loss.backward() fills w.grad().
//
// micrograd's algorithm, done iteratively so that a chain of 100,000 ops needs no more C++ stack than a
// chain of one. This file is the first-order pass, top to bottom in the order it runs, each helper just
// before the function that calls it or right under it:
//   run_backward   makes the seed (d root / d root: 1, or the gradient passed in);
//   1. the order   a depth-first post-order of the nodes reachable from the root, with an explicit stack
//                  (each node after every node that computed one of its inputs);
//   2. the walk    that order in reverse, so each node runs after all its consumers have added their
//                  share of its output's gradient: the multivariable chain rule sums them. It calls the
//                  node's backward function, then adds each gradient it returned into the gradient
//                  waiting at the input's node, or hands it to the leaf;
//   3. the leaf    adds it into the leaf's .grad.
// The per-pass state (the gradient waiting at each node) lives in this pass's own vector, not in the
// graph's nodes.
//
// Seven things extend this path, each in a file of its own behind a one-line call here, and a first
// reading can skip them all: the errors a wrong call or a wrong backward function gets (backward_checks.cpp),
// create_graph (backward_with_graph.cpp), the pieces of unbind's output (output_parts.cpp), anomaly mode's
// checks (anomaly.cpp), the hooks a Variable may carry (register_hook, retain_grad: hooks.cpp), forward
// mode's tangents, paused for the pass (forward_ad.h), and an observer that watches the pass
// (observer.h); all in autograd/.
#include "minigrad/autograd/engine.h"

#include <string>
#include <utility>

#include "minigrad/autograd/anomaly.h"
#include "minigrad/autograd/forward_ad.h"
#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/observer.h"
#include "minigrad/autograd/slot_table.h"
#include "minigrad/tensor/elementwise.h"

namespace minigrad {

namespace {
void accumulate_into_leaf(VariableImpl& leaf, Variable g);  // step 3, at the end of the file
}  // namespace

void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options) {
  detail::check_backward_call(root, grad);  // a wrong call's errors: backward_checks.cpp
  // The seed, d root / d root: the upstream gradient passed in, or 1 for a one-element root such as a loss.
  const Tensor seed = grad.defined() ? grad : Tensor::ones(root.shape(), root.dtype());
  if (options.create_graph) return detail::run_backward_with_graph(root, seed);  // backward_with_graph.cpp
  NoGradGuard no_grad;  // the backward functions compute and record nothing
  VariableImpl& value = *root.impl();
  // A leaf: the seed is its gradient (after the leaf's hooks, if it has any: hooks.cpp).
  if (!value.grad_fn) return accumulate_into_leaf(value, detail::after_leaf_hooks(value, Variable(seed)));
  // The seed is the gradient of the root's node's output: itself, unless the root is a piece of unbind's
  // output (output_parts.cpp).
  detail::backpropagate({value.grad_fn.get()}, {detail::whole_output_gradient(value, Variable(seed))},
                        options.retain_graph, {.leaf = accumulate_into_leaf});
}

namespace detail {

namespace {

// ---- step 1: the order ----

struct Order {
  struct Entry {
    Node* node;
    size_t slot;  // index of the node's gradient in the pass's vector
  };
  SlotTable slot_of;              // node -> its slot; read it as an unordered_map, written out for speed
  std::vector<Entry> post_order;  // inputs' nodes before their consumers
};

Order topological_order(const std::vector<Node*>& roots) {
  Order order;
  struct Frame {
    Node* node;
    size_t slot;
    size_t next_input;  // the input edge to look at next
  };
  std::vector<Frame> stack;
  for (Node* root : roots) {
    const auto [root_slot, added] = order.slot_of.insert(root);
    if (!added) continue;
    stack.push_back({root, root_slot, 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.node->released()) throw_freed(*top.node);  // backward_checks.cpp
      if (top.next_input < top.node->inputs.size()) {
        Node* input = top.node->inputs[top.next_input++].node.get();
        if (input == nullptr) continue;
        const auto [input_slot, added] = order.slot_of.insert(input);
        if (added) stack.push_back({input, input_slot, 0});
      } else {  // every input's node is already in the order: this one can follow
        order.post_order.push_back({top.node, top.slot});
        stack.pop_back();
      }
    }
  }
  return order;
}

// Runs one node's backward function, naming the node in any error about tensors modified in place.
VariableGrads call_backward(const Node& node, const Variable& grad_output) {
  try {
    if (AnomalyMode::is_enabled()) return call_backward_checking_anomalies(node, grad_output);  // anomaly.cpp
    return node.backward(grad_output, NeedsGrad(node));
  } catch (const ModifiedInPlaceError& e) {
    throw ModifiedInPlaceError(std::string("backward of ") + node.op, e.detail());  // say whose tensor it was
  }
}

}  // namespace

// ---- step 2: the walk ----

void backpropagate(const std::vector<Node*>& roots, std::vector<Variable> seeds, bool retain_graph,
                   const Sinks& sinks) {
  const TangentsPaused no_tangents(!GradMode::is_enabled());  // forward mode's: autograd/forward_ad.h
  const Order order = topological_order(roots);
  std::vector<Variable> grads(order.slot_of.size());  // the gradient waiting at each node's output
  for (size_t r = 0; r < roots.size(); ++r) add_into(grads[order.slot_of.at(roots[r])], std::move(seeds[r]));

  HookedLeaves hooked_leaves;  // the gradients of leaves with hooks, summed over the pass: hooks.cpp
  BackwardObserver* const watch = backward_observer();  // usually none: observer.h

  for (auto it = order.post_order.rbegin(); it != order.post_order.rend(); ++it) {
    Node& node = *it->node;
    Variable grad_output = std::move(grads[it->slot]);  // every consumer has added its share
    if (node.hooks && grad_output.defined()) grad_output = run_output_hooks(node, std::move(grad_output));
    if (sinks.node_output && grad_output.defined()) sinks.node_output(node, grad_output);
    if (watch && grad_output.defined()) watch->on_node(node, grad_output);
    // No consumer sent a gradient (a user's backward may return none): nothing flows through here.
    if (!grad_output.defined()) {
      if (!retain_graph) node.release();
      continue;
    }
    VariableGrads input_grads = call_backward(node, grad_output);
    check_gradients(node, input_grads);  // each of its input's shape and dtype: backward_checks.cpp
    for (size_t i = 0; i < input_grads.size(); ++i) {
      const Edge& edge = node.inputs[i];
      Variable& g = input_grads[i];
      if (!g.defined()) continue;
      if (watch) watch->on_edge(node, i, g);
      if (edge.leaf && has_hooks(*edge.leaf)) {
        add_leaf_gradient(hooked_leaves, edge.leaf.get(), std::move(g));  // its hooks run after the walk
      } else if (edge.leaf) {
        if (watch) watch->on_leaf(*edge.leaf, g);
        sinks.leaf(*edge.leaf, std::move(g));
      } else if (edge.node) {
        Variable& waiting = grads[order.slot_of.at(edge.node.get())];
        if (edge.part.whole()) {
          add_into(waiting, std::move(g));  // a second consumer of the same value: the gradients add
        } else {
          add_part_into(waiting, *edge.node, edge.part, g);  // a piece of unbind's output: output_parts.cpp
        }
      }
    }
    if (!retain_graph) node.release();  // free what the backward function saved
  }
  for (auto& [leaf, g] : hooked_leaves) {
    Variable total = after_leaf_hooks(*leaf, std::move(g));
    if (watch) watch->on_leaf(*leaf, total);
    sinks.leaf(*leaf, std::move(total));
  }
}

// In place when the waiting gradient is ours alone: no other handle on its Variable or its buffer, no graph
// to record (create_graph), and dense, contiguous and the whole of its buffer. Otherwise out of place: the
// waiting tensor may be another input's too (add hands the same one to both its inputs, reshape passes its
// upstream gradient on as a view). In place, the sum skips a fresh buffer of the value's size, and its
// values are the same: total + g either way.
void add_into(Variable& total, Variable g) {
  if (!total.defined()) {
    total = std::move(g);
  } else if (!GradMode::is_enabled() && total.impl().use_count() == 1 && !total.data().is_row_sparse() &&
             total.data().owns_its_buffer()) {
    total.data().add_(g.data());
  } else {
    total = add(total, g);
  }
}

}  // namespace detail

// ---- step 3: the leaf ----

namespace {

// Adds a gradient into a leaf's .grad, which must be a buffer of its own: later backward calls add into
// it in place. A gradient that something else also holds is copied: a backward function may hand the same
// tensor to several inputs (add does) or pass its upstream gradient through (reshape does). One that
// nothing else holds is kept as it is, as PyTorch's AccumulateGrad does: an embedding's gradient is a
// fresh table-sized buffer, and copying it would be one more pass over the whole table at every step.
void accumulate_into_leaf(VariableImpl& leaf, Variable g) {
  std::shared_ptr<VariableImpl>& grad = leaf.extras_to_write().grad;
  // Take the tensor out of the Variable when no other handle sees that Variable.
  Tensor t = g.impl().use_count() == 1 ? std::move(g.impl()->data) : g.data();
  g = Variable();
  if (!grad) {
    grad = std::make_shared<VariableImpl>(t.owns_its_buffer() ? std::move(t) : t.clone());
  } else if (grad->grad_fn) {  // a gradient with a graph (create_graph) stays as it was: the sum is new
    grad = std::make_shared<VariableImpl>(add(grad->data, t));
  } else {
    accumulate(grad->data, t);  // grad += t, in place; either may be row-sparse (tensor/row_sparse.h)
  }
}

}  // namespace

}  // namespace minigrad

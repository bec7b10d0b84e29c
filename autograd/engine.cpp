// The backward pass.
//
// micrograd's algorithm, done iteratively so that a chain of 100,000 ops needs no more C++ stack than a
// chain of one. run_backward, first below, checks the root and picks the mode; backpropagate then
//   1. builds the order: a depth-first post-order of the nodes reachable from the roots (each node after
//      every node that computed one of its inputs), with an explicit stack (topological_order);
//   2. seeds the roots' gradients;
//   3. walks that order in reverse, so each node runs after all its consumers have added their share of
//      its output's gradient (the multivariable chain rule sums them): it calls the node's backward
//      function, checks every gradient it returned, then hands each to the input's node or leaf.
// The per-pass state (the gradient waiting at each node) lives in this pass's own vectors, not in the
// graph's nodes.
//
// Every backward function is written with differentiable ops on Variables. An ordinary backward runs
// them with grad mode off, so they only compute; with create_graph it runs them with grad mode on, so the
// gradients get a graph of their own. The walk is the same.
//
// A gradient may arrive row-sparse (a sparse embedding's, autograd/sparse_grad.h): it stays so only on
// its way into a leaf's gradient (accumulate_into_leaf); an op's output takes it dense.
#include "autograd/engine.h"

#include <string>
#include <utility>

#include "autograd/anomaly.h"
#include "autograd/functions.h"
#include "autograd/slot_table.h"
#include "autograd/sparse_grad.h"

namespace minigrad {

namespace {
void accumulate_into_leaf(VariableImpl& leaf, Variable g);
void accumulate_into_leaf_with_graph(VariableImpl& leaf, Variable g);
}  // namespace

void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options) {
  detail::check_root(root);
  const Tensor seed = detail::seed_for(root, grad);
  VariableImpl& root_impl = *root.impl();
  if (!options.create_graph) {
    NoGradGuard no_grad;  // the backward functions compute and record nothing
    if (!root_impl.grad_fn) return accumulate_into_leaf(root_impl, Variable(seed));  // a leaf: the seed
    detail::backpropagate({root_impl.grad_fn.get()},
                          {detail::whole_output_gradient(root_impl, Variable(seed))}, options.retain_graph,
                          {.leaf = accumulate_into_leaf});
    return;
  }
  GradModeGuard grad_mode(true);  // the backward functions record their ops
  if (!root_impl.grad_fn) return accumulate_into_leaf_with_graph(root_impl, Variable(seed));
  detail::backpropagate({root_impl.grad_fn.get()}, {detail::whole_output_gradient(root_impl, Variable(seed))},
                        /*retain_graph=*/true, {.leaf = accumulate_into_leaf_with_graph});
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

[[noreturn]] void throw_freed(const Node& node) {
  throw Error("backward",
              std::string("the graph through ") + node.op +
                  " was freed by an earlier backward(); call backward(BackwardOptions{.retain_graph "
                  "= true}) the first time to go through it again");
}

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
      if (top.node->released()) throw_freed(*top.node);
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

// ---- step 3: running one node ----

// Anomaly mode off for the ops inside a backward function: the engine checks what the function returns
// and names the op whose backward it is (check_backward_anomaly), which says more than "tanh_backward
// produced a NaN".
class AnomalyChecksOff {
 public:
  AnomalyChecksOff() { AnomalyMode::set_enabled(false); }
  ~AnomalyChecksOff() { AnomalyMode::set_enabled(previous_); }
  AnomalyChecksOff(const AnomalyChecksOff&) = delete;
  AnomalyChecksOff& operator=(const AnomalyChecksOff&) = delete;

 private:
  bool previous_ = AnomalyMode::is_enabled();
};

// Runs one node's backward function, naming the node in any error about tensors modified in place.
VariableGrads call_backward(const Node& node, const Variable& grad_output) {
  try {
    if (!AnomalyMode::is_enabled()) return node.backward(grad_output, NeedsGrad(node));
    AnomalyChecksOff checks_off;
    return node.backward(grad_output, NeedsGrad(node));
  } catch (const ModifiedInPlaceError& e) {
    throw ModifiedInPlaceError(std::string("backward of ") + node.op, e.detail());  // say whose tensor it was
  }
}

// Checks every gradient a backward function returned against its input's shape and dtype, before any of
// them is accumulated: a wrong one leaves nothing half-done.
void check_gradients(const Node& node, const VariableGrads& grads) {
  if (grads.size() != node.inputs.size()) {
    throw Error(std::string("backward of ") + node.op, "returned " + std::to_string(grads.size()) +
                                                           " gradients for " +
                                                           std::to_string(node.inputs.size()) + " inputs");
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    const Edge& edge = node.inputs[i];
    const Variable& g = grads[i];
    if (!edge.needs_grad() || !g.defined()) continue;
    const Shape& shape = g.is_row_sparse() ? g.row_sparse_value().dense_shape : g.shape();
    const DType dtype = g.is_row_sparse() ? g.row_sparse_value().dtype() : g.dtype();
    if (shape != edge.shape || dtype != edge.dtype) {
      throw ShapeError(std::string("backward of ") + node.op,
                       "the gradient for input " + std::to_string(i) + " is " + describe(shape, dtype) +
                           " but the input is " + describe(edge.shape, edge.dtype));
    }
  }
}

// Adds a consumer's gradient for one part of a node's output (an unbind piece) into the gradient waiting
// at that node. Recording (create_graph), the part is placed in zeros and added out of place. Otherwise
// it is added in place into a buffer of the whole output that this pass owns (`owned`), allocated by the
// first part to arrive: n steps of a sequence then cost one whole-sized buffer, not n of them.
void add_part_into(Variable& total, char& owned, const Node& node, OutputPart part, const Variable& g) {
  if (GradMode::is_enabled())
    return add_into(total, select_backward(g, node.output_shape, part.dim, part.index));
  if (!owned) {  // `total` may be another handle's tensor (add_into keeps gradients as they come)
    total = Variable(total.defined() ? total.data().clone()
                                     : Tensor::zeros(node.output_shape, node.output_dtype));
    owned = 1;
  }
  total.data().select(part.dim, part.index).add_(g.data());
}

}  // namespace

// Steps 1 to 3.
void backpropagate(const std::vector<Node*>& roots, std::vector<Variable> seeds, bool retain_graph,
                   const Sinks& sinks) {
  const Order order = topological_order(roots);
  std::vector<Variable> grads(order.slot_of.size());  // the gradient waiting at each node's output
  std::vector<char> owned(order.slot_of.size(), 0);   // whether that gradient is this pass's own buffer
  for (size_t r = 0; r < roots.size(); ++r) add_into(grads[order.slot_of.at(roots[r])], std::move(seeds[r]));

  for (auto it = order.post_order.rbegin(); it != order.post_order.rend(); ++it) {
    Node& node = *it->node;
    const Variable grad_output = std::move(grads[it->slot]);
    if (sinks.node_output && grad_output.defined()) sinks.node_output(node, grad_output);
    // No consumer sent a gradient (a user's backward may return none): nothing flows through here.
    if (!grad_output.defined()) {
      if (!retain_graph) node.release();
      continue;
    }
    VariableGrads input_grads = call_backward(node, grad_output);
    check_gradients(node, input_grads);
    if (AnomalyMode::is_enabled()) {
      for (size_t i = 0; i < input_grads.size(); ++i) {
        const Variable& g = input_grads[i];
        if (g.defined())
          check_backward_anomaly(node, i, g.is_row_sparse() ? g.row_sparse_value().values : g.data());
      }
    }
    for (size_t i = 0; i < input_grads.size(); ++i) {
      const Edge& edge = node.inputs[i];
      if (!input_grads[i].defined()) continue;
      if (edge.leaf) sinks.leaf(*edge.leaf, std::move(input_grads[i]));
      if (!edge.node) continue;
      if (input_grads[i].is_row_sparse())
        input_grads[i] = Variable(input_grads[i].row_sparse_value().to_dense());
      const size_t slot = order.slot_of.at(edge.node.get());
      if (edge.part.whole()) {
        owned[slot] = grads[slot].defined();  // a sum is a new buffer; a first gradient is the caller's
        add_into(grads[slot], std::move(input_grads[i]));
      } else {
        add_part_into(grads[slot], owned[slot], *edge.node, edge.part, input_grads[i]);
      }
    }
    if (!retain_graph) node.release();
  }
}

// Out of place: `g` may be shared with another input's gradient (add hands the same one to both inputs).
void add_into(Variable& total, Variable g) {
  total = total.defined() ? add(total, g) : std::move(g);
}

Variable whole_output_gradient(const VariableImpl& value, Variable g) {
  if (value.part.whole()) return g;
  return select_backward(g, value.grad_fn->output_shape, value.part.dim, value.part.index);
}

Tensor seed_for(const Variable& root, const Tensor& grad) {
  if (grad.defined()) {
    if (grad.shape() != root.shape() || grad.dtype() != root.dtype()) {
      throw ShapeError("backward", "the upstream gradient is " + describe(grad.shape(), grad.dtype()) +
                                       " but the value is " + describe(root.shape(), root.dtype()));
    }
    return grad;
  }
  if (root.numel() != 1) {
    throw ShapeError("backward", "a gradient can be implied only for a one-element value, got shape " +
                                     root.shape().str() +
                                     "; reduce it to one first (sum(y) or mean(y)), or pass the upstream "
                                     "gradient: y.backward(grad) with grad of that shape");
  }
  return Tensor::ones(root.shape(), root.dtype());
}

void check_root(const Variable& root) {
  if (!root.defined()) throw ValueError("backward", "the Variable is undefined");
  if (!root.requires_grad()) {
    throw Error("backward",
                "the value does not require grad: no input to it requires grad, or it was computed "
                "under NoGradGuard");
  }
}

}  // namespace detail

// ---- the two ways a leaf receives its gradient in backward() ----

namespace {

// Whether `g` is the only handle on its buffer and spans all of it, so that a leaf can keep it as its .grad.
bool owns_whole_buffer(const Tensor& g) {
  return g.storage().use_count() == 1 && g.is_contiguous() && g.offset() == 0 &&
         static_cast<size_t>(g.numel()) * element_size(g.dtype()) == g.storage()->nbytes();
}

// A row-sparse gradient into a leaf: kept row-sparse, coalesced with a row-sparse one already there (the
// union of the rows), or added into the rows of a dense one.
void accumulate_row_sparse_into_leaf(VariableImpl::Extras& extras, const RowSparseGrad& g) {
  if (extras.sparse_grad) {
    extras.sparse_grad = std::make_shared<RowSparseGrad>(add(*extras.sparse_grad, g));
  } else if (extras.grad.defined()) {
    if (!extras.grad.is_contiguous()) extras.grad = extras.grad.contiguous();  // set_grad may give a view
    g.add_to(extras.grad);
  } else {  // its tensors were made for this gradient by the embedding's backward: nothing else holds them
    extras.sparse_grad = std::make_shared<RowSparseGrad>(g);
  }
}

// Adds a gradient into a leaf's .grad, which must be a buffer of its own: later backward calls add into
// it in place. A gradient that something else also holds is copied: a backward function may hand the same
// tensor to several inputs (add does) or pass its upstream gradient through (reshape does). One that
// nothing else holds is kept as it is, as PyTorch's AccumulateGrad does: an embedding's gradient is a
// fresh table-sized buffer, and copying it would be one more pass over the whole table at every step.
void accumulate_into_leaf(VariableImpl& leaf, Variable g) {
  VariableImpl::Extras& extras = leaf.extras_to_write();
  extras.grad_with_graph = nullptr;  // a first-order pass leaves a gradient without a graph
  if (g.is_row_sparse()) return accumulate_row_sparse_into_leaf(extras, g.row_sparse_value());
  // Take the tensor out of the Variable when no other handle sees that Variable.
  Tensor t = g.impl().use_count() == 1 ? std::move(g.impl()->data) : g.data();
  g = Variable();
  if (extras.grad.defined()) {
    extras.grad.add_(t);
  } else {
    extras.grad = owns_whole_buffer(t) ? std::move(t) : t.clone();
    // A dense gradient into a row-sparse one: the sum is dense.
    if (extras.sparse_grad) extras.sparse_grad->add_to(extras.grad);
    extras.sparse_grad = nullptr;
  }
}

// With create_graph: the leaf's gradient as a Variable with a graph, and its value in .grad.
void accumulate_into_leaf_with_graph(VariableImpl& leaf, Variable g) {
  VariableImpl::Extras& extras = leaf.extras_to_write();
  extras.make_grad_dense();  // a gradient with a graph is dense, and so is its sum with an earlier one
  Variable total = std::move(g);
  if (extras.grad_with_graph) {
    total = add(Variable(extras.grad_with_graph), total);
  } else if (extras.grad.defined()) {
    total = add(Variable(extras.grad), total);
  }
  extras.grad_with_graph = total.impl();
  extras.grad = total.data().clone();
}

}  // namespace

}  // namespace minigrad

// The backward pass.
//
// micrograd's algorithm, done iteratively so that a chain of 100,000 ops needs no more C++ stack than a
// chain of one:
//   1. topological_order: a depth-first post-order of the nodes reachable from the roots (each node
//      after every node that computed one of its inputs), built with an explicit stack;
//   2. seed the roots' gradients: run_backward computes the seed (1 for a one-element loss) before the
//      order is built, and backpropagate puts it where the roots' gradients wait;
//   3. walk that order in reverse, so each node runs after all its consumers have added their share of
//      its output's gradient (the multivariable chain rule sums them): call its backward function,
//      check every gradient it returned, then hand each to the input's node or leaf.
// The per-pass state (the gradient waiting at each node) lives in this pass's own vectors, not in the
// graph's nodes.
//
// One pass runs on plain Tensors (first order, the fast path) or, with create_graph, on Variables: the
// same walk, calling each node's differentiable backward, so the gradients have a graph of their own.
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "autograd/anomaly.h"
#include "autograd/functions.h"
#include "autograd/slot_table.h"
#include "tensor/elementwise.h"

namespace minigrad {

namespace {

// ---- step 1: the order ----

struct Order {
  struct Entry {
    Node* node;
    size_t slot;  // index of the node's gradient in the pass's vector
  };
  detail::SlotTable slot_of;      // node -> the index of its gradient in the pass's vector
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

// Runs one node's backward function (the differentiable one for a Variable gradient), naming the node
// in any error about tensors modified in place.
template <typename G>
std::vector<G> call_backward(const Node& node, const G& grad_output) {
  try {
    if constexpr (std::is_same_v<G, Tensor>) {
      return node.backward(grad_output, NeedsGrad(node));
    } else {
      return node.differentiable_backward(grad_output, NeedsGrad(node));
    }
  } catch (const ModifiedInPlaceError& e) {
    throw ModifiedInPlaceError(std::string("backward of ") + node.op, e.detail());  // say whose tensor it was
  }
}

// Checks every gradient a backward function returned against its input's shape and dtype, before any of
// them is accumulated: a wrong one leaves nothing half-done.
template <typename G>
void check_gradients(const Node& node, const std::vector<G>& grads) {
  if (grads.size() != node.inputs.size()) {
    throw Error(std::string("backward of ") + node.op, "returned " + std::to_string(grads.size()) +
                                                           " gradients for " +
                                                           std::to_string(node.inputs.size()) + " inputs");
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    const Edge& edge = node.inputs[i];
    const G& g = grads[i];
    if (!edge.needs_grad() || !g.defined()) continue;
    if (g.shape() != edge.shape || g.dtype() != edge.dtype) {
      throw ShapeError(std::string("backward of ") + node.op, "the gradient for input " + std::to_string(i) +
                                                                  " is " + describe(g.shape(), g.dtype()) +
                                                                  " but the input is " +
                                                                  describe(edge.shape, edge.dtype));
    }
  }
}

// The gradient waiting at a node receives one more consumer's share. Out of place: `g` may be shared
// with another input's gradient (add hands the same tensor to both inputs).
template <typename G>
void add_into(G& total, G g) {
  total = total.defined() ? add(total, g) : std::move(g);
}

const Tensor& data_of(const Tensor& t) {
  return t;
}
const Tensor& data_of(const Variable& v) {
  return v.data();
}

// What a pass does with the gradients that reach their destinations.
template <typename G>
struct Sinks {
  std::function<void(VariableImpl& leaf, G g)> leaf;                       // a leaf that requires grad
  std::function<void(const Node& node, const G& total)> node_output = {};  // before `node` runs
};

// Steps 2 and 3: seeds the roots and walks the order in reverse.
template <typename G>
void backpropagate(const std::vector<Node*>& roots, std::vector<G> seeds, bool retain_graph,
                   const Sinks<G>& sinks) {
  const Order order = topological_order(roots);
  std::vector<G> grads(order.slot_of.size());  // the gradient waiting at each node's output
  for (size_t r = 0; r < roots.size(); ++r) add_into(grads[order.slot_of.at(roots[r])], std::move(seeds[r]));

  for (auto it = order.post_order.rbegin(); it != order.post_order.rend(); ++it) {
    Node& node = *it->node;
    const G grad_output = std::move(grads[it->slot]);
    if (sinks.node_output && grad_output.defined()) sinks.node_output(node, grad_output);
    // No consumer sent a gradient (a user's backward may return none): nothing flows through here.
    if (!grad_output.defined()) {
      if (!retain_graph) node.release();
      continue;
    }
    std::vector<G> input_grads = call_backward(node, grad_output);
    check_gradients(node, input_grads);
    if (AnomalyMode::is_enabled()) {
      for (size_t i = 0; i < input_grads.size(); ++i) {
        if (input_grads[i].defined()) check_backward_anomaly(node, i, data_of(input_grads[i]));
      }
    }
    for (size_t i = 0; i < input_grads.size(); ++i) {
      const Edge& edge = node.inputs[i];
      if (!input_grads[i].defined()) continue;
      if (edge.leaf) sinks.leaf(*edge.leaf, std::move(input_grads[i]));
      if (edge.node) add_into(grads[order.slot_of.at(edge.node.get())], std::move(input_grads[i]));
    }
    if (!retain_graph) node.release();
  }
}

// ---- the two ways a leaf receives its gradient in backward() ----

// Whether `g` is the only handle on its buffer and spans all of it, so that a leaf can keep it as its .grad.
bool owns_whole_buffer(const Tensor& g) {
  return g.storage().use_count() == 1 && g.is_contiguous() && g.offset() == 0 &&
         static_cast<size_t>(g.numel()) * element_size(g.dtype()) == g.storage()->nbytes();
}

// Adds a gradient into a leaf's .grad, which must be a buffer of its own: later backward calls add into
// it in place. A gradient that something else also holds is copied: a backward function may hand the same
// tensor to several inputs (add does) or pass its upstream gradient through (reshape does). One that
// nothing else holds is kept as it is, as PyTorch's AccumulateGrad does: an embedding's gradient is a
// fresh table-sized buffer, and copying it was one more pass over the whole table at every step.
void accumulate_into_leaf(VariableImpl& leaf, Tensor g) {
  leaf.grad_with_graph = nullptr;  // a first-order pass leaves a gradient without a graph
  if (leaf.grad.defined()) {
    leaf.grad.add_(g);
  } else {
    leaf.grad = owns_whole_buffer(g) ? std::move(g) : g.clone();
  }
}

// With create_graph: the leaf's gradient as a Variable with a graph, and its value in .grad.
void accumulate_into_leaf_with_graph(VariableImpl& leaf, const Variable& g) {
  Variable total = g;
  if (leaf.grad_with_graph) {
    total = add(Variable(leaf.grad_with_graph), g);
  } else if (leaf.grad.defined()) {
    total = add(Variable(leaf.grad), g);
  }
  leaf.grad_with_graph = total.impl();
  leaf.grad = total.data().clone();
}

// The checked upstream gradient of `root`: `grad`, or 1 for a one-element root.
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
                                     root.shape().str() + "; pass the upstream gradient");
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

}  // namespace

void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options) {
  check_root(root);
  const Tensor seed = seed_for(root, grad);
  VariableImpl& root_impl = *root.impl();
  if (!options.create_graph) {
    if (!root_impl.grad_fn) return accumulate_into_leaf(root_impl, seed);  // a leaf's gradient is the seed
    backpropagate<Tensor>({root_impl.grad_fn.get()}, {seed}, options.retain_graph,
                          {.leaf = accumulate_into_leaf});
    return;
  }
  GradModeGuard grad_mode(true);  // the differentiable backward functions record their ops
  if (!root_impl.grad_fn) return accumulate_into_leaf_with_graph(root_impl, Variable(seed));
  backpropagate<Variable>({root_impl.grad_fn.get()}, {Variable(seed)}, /*retain_graph=*/true,
                          {.leaf = accumulate_into_leaf_with_graph});
}

namespace {

// grad(): the gradient reaching each requested input, collected instead of accumulated into .grad.
template <typename G>
std::vector<Variable> collect_gradients(const std::vector<Variable>& outputs,
                                        const std::vector<Tensor>& seeds,
                                        const std::vector<Variable>& grad_outputs,
                                        const std::vector<Variable>& inputs, bool retain_graph) {
  std::vector<G> found(inputs.size());
  std::unordered_map<const void*, std::vector<size_t>> wanted;  // leaf impl or node -> input positions
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Variable& x = inputs[i];
    wanted[x.is_leaf() ? static_cast<const void*>(x.impl().get()) : x.grad_fn().get()].push_back(i);
  }
  auto deliver = [&](const void* key, const G& g) {
    auto it = wanted.find(key);
    if (it == wanted.end()) return;
    for (size_t i : it->second) add_into(found[i], g);
  };
  std::vector<Node*> roots;
  std::vector<G> root_seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    G seed;
    if constexpr (std::is_same_v<G, Tensor>) {
      seed = seeds[k];
    } else {
      seed = grad_outputs.empty() ? Variable(seeds[k]) : grad_outputs[k];
    }
    if (outputs[k].is_leaf()) {
      deliver(outputs[k].impl().get(), seed);
    } else {
      roots.push_back(outputs[k].grad_fn().get());
      root_seeds.push_back(std::move(seed));
    }
  }
  if (!roots.empty()) {
    backpropagate<G>(roots, std::move(root_seeds), retain_graph,
                     {.leaf = [&](VariableImpl& leaf, const G& g) { deliver(&leaf, g); },
                      .node_output = [&](const Node& node, const G& g) { deliver(&node, g); }});
  }
  std::vector<Variable> result;
  for (G& g : found) {
    if constexpr (std::is_same_v<G, Tensor>) {
      result.push_back(g.defined() ? Variable(std::move(g)) : Variable());
    } else {
      result.push_back(std::move(g));
    }
  }
  return result;
}

}  // namespace

std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Variable>& grad_outputs, GradOptions options) {
  if (outputs.empty()) throw ValueError("grad", "needs at least one output");
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size()) {
    throw ValueError("grad", std::to_string(grad_outputs.size()) + " grad_outputs for " +
                                 std::to_string(outputs.size()) + " outputs");
  }
  std::vector<Tensor> seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    check_root(outputs[k]);
    if (!grad_outputs.empty() && !grad_outputs[k].defined()) {
      throw ValueError("grad", "grad_outputs[" + std::to_string(k) + "] is undefined");
    }
    seeds.push_back(seed_for(outputs[k], grad_outputs.empty() ? Tensor() : grad_outputs[k].data()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) {
      throw ValueError("grad", "input " + std::to_string(i) + " is undefined or does not require grad");
    }
  }
  const bool retain_graph = options.retain_graph.value_or(options.create_graph);
  std::vector<Variable> result;
  if (options.create_graph) {
    GradModeGuard grad_mode(true);
    result = collect_gradients<Variable>(outputs, seeds, grad_outputs, inputs, retain_graph);
  } else {
    result = collect_gradients<Tensor>(outputs, seeds, grad_outputs, inputs, retain_graph);
  }
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].defined() && !options.allow_unused) {
      throw ValueError("grad", "input " + std::to_string(i) +
                                   " was not used to compute the outputs (pass allow_unused = true to get an "
                                   "undefined gradient instead)");
    }
  }
  return result;
}

}  // namespace minigrad

// The backward pass.
//
// A node may run its backward function only after every node that consumed its output has sent its
// share of the gradient (the multivariable chain rule sums them). So the engine first walks the graph
// from the root and counts, for each node, the edges that lead into it; then it runs a node when that
// count drops to zero. Both walks use an explicit stack rather than recursion, so a chain of a hundred
// thousand ops needs no more C++ stack than a chain of one.
#include <atomic>
#include <string>

#include "autograd/variable.h"
#include "tensor/elementwise.h"

namespace minigrad {

namespace {

uint64_t next_pass() {
  static std::atomic<uint64_t> pass{0};
  return ++pass;
}

// Adds a gradient into a leaf's .grad. The first gradient is copied, because a backward function may
// hand the same tensor to several inputs (add does) and the leaf's .grad must be its own buffer for the
// in-place accumulation of later backward calls.
void accumulate_into_leaf(VariableImpl& leaf, const Tensor& g) {
  if (!leaf.grad.defined()) {
    leaf.grad = g.clone();
  } else {
    leaf.grad.add_(g);
  }
}

// Checks that a backward function returned a gradient that fits its input.
void check_gradient(const Node& node, size_t input, const Tensor& g) {
  const Edge& edge = node.inputs[input];
  if (g.shape() != edge.shape || g.dtype() != edge.dtype) {
    throw ShapeError(std::string("backward of ") + node.op,
                     "the gradient for input " + std::to_string(input) + " has shape " + g.shape().str() +
                         " (" + std::string(dtype_name(g.dtype())) + ") but the input has shape " +
                         edge.shape.str() + " (" + std::string(dtype_name(edge.dtype)) + ")");
  }
}

// Runs one node's backward function, naming the node in any error about tensors modified in place.
Grads call_backward(Node& node, const Tensor& grad_output) {
  try {
    return node.backward(grad_output, node.needs());
  } catch (const ModifiedInPlaceError& e) {
    throw ModifiedInPlaceError(std::string("backward of ") + node.op, e.detail());  // say whose tensor it was
  }
}

[[noreturn]] void throw_freed(const Node& node) {
  throw Error("backward",
              std::string("the graph through ") + node.op +
                  " was freed by an earlier backward(); call backward(BackwardOptions{.retain_graph "
                  "= true}) the first time to go through it again");
}

}  // namespace

void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options) {
  if (!root.defined()) throw ValueError("backward", "the Variable is undefined");
  if (!root.requires_grad()) {
    throw Error("backward",
                "the value does not require grad: no input to it requires grad, or it was computed "
                "under NoGradGuard");
  }
  Tensor seed = grad;
  if (!seed.defined()) {
    if (root.numel() != 1) {
      throw ShapeError("backward", "a gradient can be implied only for a one-element value, got shape " +
                                       root.shape().str() + "; pass the upstream gradient");
    }
    seed = Tensor::ones(root.shape(), root.dtype());
  } else if (seed.shape() != root.shape() || seed.dtype() != root.dtype()) {
    throw ShapeError("backward", "the upstream gradient has shape " + seed.shape().str() + " (" +
                                     std::string(dtype_name(seed.dtype())) + ") but the value has shape " +
                                     root.shape().str() + " (" + std::string(dtype_name(root.dtype())) + ")");
  }

  VariableImpl& root_impl = *root.impl();
  if (!root_impl.grad_fn) {  // backward on a leaf: its gradient is the seed itself
    accumulate_into_leaf(root_impl, seed);
    return;
  }

  // 1. Count the consumers of every node reachable from the root.
  const uint64_t pass = next_pass();
  Node* const start = root_impl.grad_fn.get();
  start->pass = pass;
  start->pending = 0;
  start->grad = Tensor();
  std::vector<Node*> stack{start};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    if (!node->backward) throw_freed(*node);
    for (const Edge& edge : node->inputs) {
      Node* next = edge.node.get();
      if (next == nullptr) continue;
      if (next->pass != pass) {  // first visit in this pass: reset what an earlier pass may have left
        next->pass = pass;
        next->pending = 0;
        next->grad = Tensor();
        stack.push_back(next);
      }
      ++next->pending;
    }
  }

  // 2. Send gradients down, running each node once all its consumers have reported. Plain pointers are
  // safe here: every node stays alive through the root's chain of edges until the pass is over.
  start->grad = seed;
  std::vector<Node*> ready{start};
  // One consumer of `next` has reported; when the last has, `next` may run.
  auto reported = [&ready](Node* next) {
    if (--next->pending == 0) ready.push_back(next);
  };
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    const Tensor grad_output = std::move(node->grad);  // leaves node->grad undefined
    if (!grad_output.defined()) {
      // Every consumer reported "no gradient" (e.g. all of them were integer lookups): nothing flows on,
      // but the inputs still hear from this node.
      for (const Edge& edge : node->inputs) {
        if (edge.node) reported(edge.node.get());
      }
      if (!options.retain_graph) node->release();
      continue;
    }
    Grads grads = call_backward(*node, grad_output);
    if (grads.size() != node->inputs.size()) {
      throw Error(std::string("backward of ") + node->op,
                  "returned " + std::to_string(grads.size()) + " gradients for " +
                      std::to_string(node->inputs.size()) + " inputs");
    }
    for (size_t i = 0; i < grads.size(); ++i) {
      const Edge& edge = node->inputs[i];
      if (!edge.needs_grad()) continue;
      Tensor& g = grads[i];
      if (!g.defined()) {
        // An input that gets no gradient from this op still counts as reported.
        if (edge.node) reported(edge.node.get());
        continue;
      }
      check_gradient(*node, i, g);
      if (edge.leaf) {
        accumulate_into_leaf(*edge.leaf, g);
        continue;
      }
      Node& next = *edge.node;
      // Out of place: `g` may be shared with another input's gradient.
      next.grad = next.grad.defined() ? add(next.grad, g) : std::move(g);
      reported(&next);
    }
    if (!options.retain_graph) node->release();
  }
}

}  // namespace minigrad

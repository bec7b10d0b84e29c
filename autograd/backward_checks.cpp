// The errors a backward pass can raise, in one place so that the engine (autograd/engine.cpp) reads as
// the algorithm: each is called there in one line, and a first reading can skip this file.
#include <string>

#include "minigrad/autograd/engine.h"

namespace minigrad::detail {

void check_backward_call(const Variable& root, const Tensor& grad) {
  if (!root.defined()) throw ValueError("backward", "the Variable is undefined");
  if (!root.requires_grad()) {
    throw Error("backward",
                "the value does not require grad: no input to it requires grad, or it was computed "
                "under NoGradGuard");
  }
  if (grad.defined()) {
    if (grad.shape() != root.shape() || grad.dtype() != root.dtype()) {
      throw ShapeError("backward", "the upstream gradient is " + describe(grad.shape(), grad.dtype()) +
                                       " but the value is " + describe(root.shape(), root.dtype()));
    }
  } else if (root.numel() != 1) {
    throw ShapeError("backward", "a gradient can be implied only for a one-element value, got shape " +
                                     root.shape().str() +
                                     "; reduce it to one first (sum(y) or mean(y)), or pass the upstream "
                                     "gradient: y.backward(grad) with grad of that shape");
  }
}

void throw_freed(const Node& node) {
  throw Error("backward",
              std::string("the graph through ") + node.op +
                  " was freed by an earlier backward(); call backward(BackwardOptions{.retain_graph "
                  "= true}) the first time to go through it again");
}

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
    if (g.shape() != edge.shape || g.dtype() != edge.dtype) {
      throw ShapeError(std::string("backward of ") + node.op, "the gradient for input " + std::to_string(i) +
                                                                  " is " + describe(g.shape(), g.dtype()) +
                                                                  " but the input is " +
                                                                  describe(edge.shape, edge.dtype));
    }
  }
}

}  // namespace minigrad::detail

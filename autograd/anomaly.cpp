#include "minigrad/autograd/anomaly.h"

#include <cmath>

#include "minigrad/tensor/reduce.h"

namespace minigrad {

namespace {

// "log <- add <- matmul": the op that computed a value, then the op that computed its first recorded
// input, and so on down to the leaves (the path a reader follows back to the cause).
std::string chain_from(const Node* node) {
  std::string chain;
  for (int steps = 0; node != nullptr && steps < 50; ++steps) {
    chain += (chain.empty() ? "" : " <- ") + std::string(node->op);
    const Node* next = nullptr;
    for (const Edge& edge : node->inputs) {
      if (edge.node) {
        next = edge.node.get();
        break;
      }
    }
    node = next;
  }
  return chain.empty() ? "none (its inputs are leaves)" : chain;
}

}  // namespace

namespace detail {

void check_forward_anomaly(const char* op, const Tensor& output, std::span<const Variable> inputs) {
  if (all_finite(output)) return;
  std::string detail =
      "the forward pass produced a NaN or infinity (output " + describe(output.shape(), output.dtype()) + ")";
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    detail += "; input " + std::to_string(i) + " " + describe(inputs[i].shape(), inputs[i].dtype()) +
              (all_finite(inputs[i].data()) ? " is finite" : " already holds a NaN or infinity") +
              ", computed by: " + chain_from(inputs[i].grad_fn().get());
  }
  throw AnomalyError(op, detail);
}

namespace {

// Anomaly mode off for the ops inside a backward function, back on (as it was) after.
class AnomalyChecksOff {
 public:
  AnomalyChecksOff() { AnomalyMode::set_enabled(false); }
  ~AnomalyChecksOff() { AnomalyMode::set_enabled(previous_); }
  AnomalyChecksOff(const AnomalyChecksOff&) = delete;
  AnomalyChecksOff& operator=(const AnomalyChecksOff&) = delete;

 private:
  bool previous_ = AnomalyMode::is_enabled();
};

}  // namespace

VariableGrads call_backward_checking_anomalies(const Node& node, const Variable& grad_output) {
  VariableGrads grads;
  {
    AnomalyChecksOff checks_off;
    grads = node.backward(grad_output, NeedsGrad(node));
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) check_backward_anomaly(node, i, grads[i].data());
  }
  return grads;
}

}  // namespace detail

void check_backward_anomaly(const Node& node, size_t input, const Tensor& grad) {
  if (all_finite(grad)) return;
  throw AnomalyError(std::string("backward of ") + node.op,
                     "returned a NaN or infinity in the gradient for input " + std::to_string(input) +
                         "; the op's input was computed by: " + chain_from(node.inputs[input].node.get()));
}

}  // namespace minigrad

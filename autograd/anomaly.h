// Anomaly mode's checks (see AnomalyMode in autograd/grad_mode.h): is a result finite, and if not, which
// op made it and which ops made that op's inputs.
#pragma once

#include "minigrad/autograd/graph.h"

namespace minigrad {

// Throws AnomalyError if `grad` (the gradient `node`'s backward computed for input `input`) holds a NaN
// or an infinity.
void check_backward_anomaly(const Node& node, size_t input, const Tensor& grad);

namespace detail {
// The engine's call of a node's backward function in anomaly mode: the forward checks are off for the ops
// inside it, and each gradient it returns is checked (check_backward_anomaly), which names the op whose
// backward it is: that says more than "tanh_backward produced a NaN".
VariableGrads call_backward_checking_anomalies(const Node& node, const Variable& grad_output);
}  // namespace detail

}  // namespace minigrad

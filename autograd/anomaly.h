// Anomaly mode's checks (see AnomalyMode in autograd/grad_mode.h): is a result finite, and if not, which
// op made it and which ops made that op's inputs.
#pragma once

#include "autograd/graph.h"

namespace minigrad {

// Throws AnomalyError if `grad` (the gradient `node`'s backward computed for input `input`) holds a NaN
// or an infinity.
void check_backward_anomaly(const Node& node, size_t input, const Tensor& grad);

}  // namespace minigrad

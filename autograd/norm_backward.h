// What layer norm's and batch norm's backward share (autograd/layer_norm.cpp, autograd/batch_norm.cpp): a
// gradient with no graph to record comes from the fused kernel; under create_graph, from the same formulas
// composed of differentiable ops. Private to autograd.
#pragma once

#include "minigrad/autograd/graph.h"
#include "minigrad/tensor/layer_norm.h"

namespace minigrad::detail {

// True when the backward must record its gradients' graph: grad mode on (create_graph) and g, x or the
// weight requiring grad.
inline bool norm_backward_records(const Variable& g, const Variable& x, const Variable& weight) {
  return GradMode::is_enabled() &&
         (g.requires_grad() || x.requires_grad() || (weight.defined() && weight.requires_grad()));
}

// The fused kernel's gradients of x, weight and bias as Variables (undefined where not computed).
inline VariableGrads as_variables(NormGradients grads) {
  auto wrap = [](Tensor& t) { return t.defined() ? Variable(std::move(t)) : Variable(); };
  return {wrap(grads.input), wrap(grads.weight), wrap(grads.bias)};
}

}  // namespace minigrad::detail

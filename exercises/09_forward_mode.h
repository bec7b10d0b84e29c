// Task 9: forward mode, a tangent rule and a Jacobian-vector product. You write
// exercises/09_forward_mode.cpp.
#pragma once

#include <functional>

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// my_logsumexp's tangent rule: ẏ (N) from x (N, C) and t[0] = ẋ (N, C).
Variable my_logsumexp_tangent(const Variable& x, const Tangents& t);

// x (N, C) -> y (N): y[n] = log Σ_c exp(x[n][c]), differentiable in both modes. Its forward and its
// backward are written here; record()'s last argument, its tangent rule, calls yours.
inline Variable my_logsumexp(const Variable& x) {
  // Computed as m + log Σ exp(x - m), m the row's largest, so that exp cannot overflow.
  const Tensor m = max(x.data(), 1, /*keepdim=*/true);
  const Tensor y = add(log(sum(exp(sub(x.data(), m)), {1})), m.reshape({-1}));
  return record(
      "my_logsumexp", y, {x},
      [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
        // d y[n] / d x[n][c] = exp(x[n][c]) / Σ exp(x[n]) = softmax(x)[n][c]: g spread over each row
        return {mul(unsqueeze(g, 1), softmax(sx.variable(), 1))};
      },
      [&](const Tangents& t) { return my_logsumexp_tangent(x, t); });
}

// J·v for f at x: the derivative of f along v, by forward mode. v has x's shape; the result f(x)'s.
Variable my_jvp(const std::function<Variable(const Variable&)>& f, const Variable& x, const Variable& v);

}  // namespace minigrad::exercises

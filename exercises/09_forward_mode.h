// Task 9: forward mode, a tangent rule and a Jacobian-vector product. You write
// exercises/09_forward_mode.cpp.
#pragma once

#include <functional>

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// x (N, C) -> y (N): y[n] = log Σ_c exp(x[n][c]), differentiable in both modes.
Variable my_logsumexp(const Variable& x);

// J·v for f at x: the derivative of f along v, by forward mode. v has x's shape; the result f(x)'s.
Variable my_jvp(const std::function<Variable(const Variable&)>& f, const Variable& x, const Variable& v);

}  // namespace minigrad::exercises

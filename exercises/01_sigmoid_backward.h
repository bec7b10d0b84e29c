// Task 1: sigmoid as a custom op with its backward. You write exercises/01_sigmoid_backward.cpp.
#pragma once

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// σ(x) = 1 / (1 + e⁻ˣ) elementwise, differentiable (any shape, same shape out).
Variable my_sigmoid(const Variable& x);

}  // namespace minigrad::exercises

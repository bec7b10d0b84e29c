// Task 5: matrix product as a custom op with its backward. You write exercises/05_matmul_backward.cpp.
#pragma once

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// a (M, K) · b (K, N) -> (M, N), differentiable in both.
Variable my_matmul(const Variable& a, const Variable& b);

}  // namespace minigrad::exercises

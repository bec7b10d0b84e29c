// Task 2: the reduction a broadcast's gradient needs. You write exercises/02_sum_to.cpp.
#pragma once

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// x summed down to `shape`, of which x's shape is a broadcast: (2, 3, 4) to (3, 1) sums over dims 0 and 2.
Variable my_sum_to(const Variable& x, const Shape& shape);

}  // namespace minigrad::exercises

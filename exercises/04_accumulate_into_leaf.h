// Task 4: what backward() does when a gradient reaches a leaf. You write
// exercises/04_accumulate_into_leaf.cpp.
#pragma once

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// Adds `g`, one use's share of d loss / d leaf, into leaf.grad(). The engine calls it once per use of
// the leaf in each backward pass.
void accumulate_into_leaf(const Variable& leaf, const Tensor& g);

}  // namespace minigrad::exercises

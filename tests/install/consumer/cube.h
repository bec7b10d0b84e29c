// A user's own differentiable op, defined with minigrad's public mechanism (docs/writing-an-op.md).
#pragma once

#include <minigrad/minigrad.h>

// x³, elementwise.
inline minigrad::Variable cube(const minigrad::Variable& x) {
  using namespace minigrad;
  return record("cube", pow(x.data(), 3.0), {x},
                [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                  const Variable x = sx.variable();
                  return {mul(mul(g, mul(x, x)), 3.0)};  // d(x³)/dx = 3x²
                });
}

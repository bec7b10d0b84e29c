// A user's own differentiable op, defined with minigrad's public mechanism (README: "Writing an op").
#pragma once

#include <minigrad/minigrad.h>

// x³, elementwise.
inline minigrad::Variable cube(const minigrad::Variable& x) {
  using namespace minigrad;
  return record("cube", pow(x.data(), 3.0), {x}, [sx = SavedTensor(x)]<typename G>(const G& g, NeedsGrad) {
    const G x = sx.as<G>();
    return GradsOf<G>{mul(mul(g, mul(x, x)), 3.0)};  // d(x³)/dx = 3x²
  });
}

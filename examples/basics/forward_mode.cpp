// Forward mode beside reverse mode: a dual number by hand, then one function differentiated both ways,
// a column of its Jacobian from one forward pass and a row from one backward pass
// (docs/forward-mode.md).
//
//   minigrad-basics-forward-mode
#include <iostream>

#include "minigrad/minigrad.h"

using namespace minigrad;

int main() {
  constexpr DType F64 = DType::Float64;
  forward_ad::DualLevel level;  // tangents live while it does

  // x = 3 + ε, with ε² = 0: x³ = 27 + 27ε, and 27 = 3·3² is d x³ / dx at 3.
  const Variable x = forward_ad::make_dual(Tensor::full({}, 3.0, F64), Tensor::full({}, 1.0, F64));
  const auto [cube, slope] = forward_ad::unpack_dual(x * x * x);
  std::cout << "x³ at 3: " << cube.item() << ", its tangent " << slope.item() << "\n";

  // f(x) = (x₀² x₁, 5 x₀ + x₁) at (1, 2): J = [[2 x₀ x₁, x₀²], [5, 1]] = [[4, 1], [5, 1]].
  const auto f = [](const Variable& z) {
    const Variable z0 = z.select(0, 0), z1 = z.select(0, 1);
    return stack({z0 * z0 * z1, z0 * 5.0 + z1});
  };
  const Tensor point = Tensor::from_values({1, 2}, {2}, F64), e0 = Tensor::from_values({1, 0}, {2}, F64);

  // Forward mode: the input carries the tangent e0; the output's tangent is J·e0, J's first column.
  const Variable y = f(forward_ad::make_dual(point, e0));
  std::cout << "forward, J·e0 (a column): " << forward_ad::unpack_dual(y).tangent.data() << "\n";

  // Reverse mode: backward from e0 gives e0ᵀ·J, J's first row.
  const Variable z(point, /*requires_grad=*/true);
  f(z).backward(e0);
  std::cout << "reverse, e0ᵀ·J (a row):   " << z.grad() << "\n";
}

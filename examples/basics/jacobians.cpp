// Derivatives of whole functions: a Jacobian built a row and a column at a time, the products that
// give one row or one column without the rest, and the Hessian of Rosenbrock's function with a
// Hessian-vector product (docs/function-transforms.md).
//
//   minigrad-basics-jacobians
#include <iostream>

#include "minigrad/minigrad.h"

using namespace minigrad;

int main() {
  constexpr DType F64 = DType::Float64;

  // f(x) = (x₀² x₁, 5 x₀ + x₁): R² -> R², at x = (1, 2). Its Jacobian is [[2 x₀ x₁, x₀²], [5, 1]].
  const auto f = [](const Variable& x) {
    const Variable x0 = x.select(0, 0), x1 = x.select(0, 1);
    return stack({x0 * x0 * x1, x0 * 5.0 + x1});
  };
  const Variable x(Tensor::from_values({1, 2}, {2}, F64));
  std::cout << "J, a row at a time (one backward pass per output):\n"
            << functional::jacobian(f, x).data() << "\n";
  std::cout << "J, a column at a time (one Jacobian-vector product per input):\n"
            << functional::jacobian(f, x, {.mode = functional::Mode::Forward}).data() << "\n";

  // One row, uᵀJ, and one column, J·v, each without the rest of J.
  const Variable e0(Tensor::from_values({1, 0}, {2}, F64));
  std::cout << "first row, vjp with u = e0:    " << functional::vjp(f, x, e0).product.data() << "\n";
  std::cout << "first column, jvp with v = e0: " << functional::jvp(f, x, e0).product.data() << "\n";

  // Rosenbrock's function (1 - x₀)² + 100 (x₁ - x₀²)², whose minimum is at (1, 1), where its Hessian is
  // [[802, -400], [-400, 200]].
  const auto rosenbrock = [](const Variable& z) {
    const Variable z0 = z.select(0, 0), z1 = z.select(0, 1);
    const Variable a = rsub(1.0, z0), b = z1 - z0 * z0;
    return a * a + b * b * 100.0;
  };
  const Variable minimum(Tensor::from_values({1, 1}, {2}, F64));
  std::cout << "Hessian of Rosenbrock at (1, 1):\n"
            << functional::hessian(rosenbrock, minimum).data() << "\n";
  const auto [value, hv] =
      functional::hvp(rosenbrock, minimum, Variable(Tensor::from_values({1, 1}, {2}, F64)));
  std::cout << "f(1, 1) = " << value.item() << ", H·(1, 1) = " << hv.data() << "\n";
}

// Arithmetic. A broadcast input's gradient is the output gradient summed back to the input's shape.
#include <cmath>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable add(const Variable& a, const Variable& b) {
  return record("add", add(a.data(), b.data()), {a, b},
                [sa = a.shape(), sb = b.shape()](const Tensor& g, NeedsGrad needs) -> Grads {
                  // d(a + b)/da = d(a + b)/db = 1
                  return {needs[0] ? sum_to(g, sa) : Tensor(), needs[1] ? sum_to(g, sb) : Tensor()};
                });
}

Variable sub(const Variable& a, const Variable& b) {
  return record("sub", sub(a.data(), b.data()), {a, b},
                [sa = a.shape(), sb = b.shape()](const Tensor& g, NeedsGrad needs) -> Grads {
                  return {needs[0] ? sum_to(g, sa) : Tensor(), needs[1] ? sum_to(neg(g), sb) : Tensor()};
                });
}

Variable mul(const Variable& a, const Variable& b) {
  return record(
      "mul", mul(a.data(), b.data()), {a, b},
      [sa = SavedTensor(a.data()), sb = SavedTensor(b.data())](const Tensor& g, NeedsGrad needs) -> Grads {
        // d(a·b)/da = b, d(a·b)/db = a
        const Tensor& a = sa.get();
        const Tensor& b = sb.get();
        return {needs[0] ? sum_to(mul(g, b), a.shape()) : Tensor(),
                needs[1] ? sum_to(mul(g, a), b.shape()) : Tensor()};
      });
}

Variable div(const Variable& a, const Variable& b) {
  return record(
      "div", div(a.data(), b.data()), {a, b},
      [sa = SavedTensor(a.data()), sb = SavedTensor(b.data())](const Tensor& g, NeedsGrad needs) -> Grads {
        // d(a/b)/da = 1/b, d(a/b)/db = -a/b²
        const Tensor& a = sa.get();
        const Tensor& b = sb.get();
        Tensor ga, gb;
        const Tensor g_over_b = div(g, b);
        if (needs[0]) ga = sum_to(g_over_b, a.shape());
        if (needs[1]) gb = sum_to(neg(mul(g_over_b, div(a, b))), b.shape());
        return {ga, gb};
      });
}

Variable neg(const Variable& x) {
  return record("neg", neg(x.data()), {x}, [](const Tensor& g, NeedsGrad) -> Grads { return {neg(g)}; });
}

Variable add(const Variable& x, double s) {
  return record("add_scalar", add(x.data(), s), {x}, [](const Tensor& g, NeedsGrad) -> Grads { return {g}; });
}

Variable mul(const Variable& x, double s) {
  return record("mul_scalar", mul(x.data(), s), {x},
                [s](const Tensor& g, NeedsGrad) -> Grads { return {mul(g, s)}; });
}

Variable div(const Variable& x, double s) {
  return record("div_scalar", div(x.data(), s), {x},
                [s](const Tensor& g, NeedsGrad) -> Grads { return {div(g, s)}; });
}

Variable rsub(double s, const Variable& x) {
  return record("rsub_scalar", rsub(s, x.data()), {x},
                [](const Tensor& g, NeedsGrad) -> Grads { return {neg(g)}; });
}

Variable rdiv(double s, const Variable& x) {
  Tensor y = rdiv(s, x.data());
  return record("rdiv_scalar", y, {x},
                [sx = SavedTensor(x.data()), sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
                  // d(s/x)/dx = -s/x² = -y/x
                  return {zip_float("rdiv_backward", mul(g, sy.get()), sx.get(),
                                    [](auto gy, auto x) { return -gy / x; })};
                });
}

Variable pow(const Variable& x, double exponent) {
  return record("pow", pow(x.data(), exponent), {x},
                [sx = SavedTensor(x.data()), exponent](const Tensor& g, NeedsGrad) -> Grads {
                  // d(x^p)/dx = p·x^(p-1)
                  return {zip_float("pow_backward", g, sx.get(), [exponent](auto g, auto x) {
                    using T = decltype(x);
                    return g * T(exponent) * std::pow(x, T(exponent - 1));
                  })};
                });
}

}  // namespace minigrad

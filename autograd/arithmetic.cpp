// Arithmetic. A broadcast input's gradient is the output gradient summed back to the input's shape.
#include <cmath>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Variable add(const Variable& a, const Variable& b) {
  // d(a + b)/da = d(a + b)/db = 1
  return record(
      "add", add(a.data(), b.data()), {a, b},
      [sa = a.shape(), sb = b.shape()](const Variable& g, NeedsGrad needs) -> VariableGrads {
        return {needs[0] ? sum_to(g, sa) : Variable(), needs[1] ? sum_to(g, sb) : Variable()};
      },
      // (a + b)˙ = ȧ + ḃ, a term for each operand that carries a tangent
      [](const Tangents& t) {
        return t.sum({t.has(0) ? t[0] : Variable(), t.has(1) ? t[1] : Variable()});
      });
}

Variable sub(const Variable& a, const Variable& b) {
  return record(
      "sub", sub(a.data(), b.data()), {a, b},
      [sa = a.shape(), sb = b.shape()](const Variable& g, NeedsGrad needs) -> VariableGrads {
        return {needs[0] ? sum_to(g, sa) : Variable(), needs[1] ? sum_to(neg(g), sb) : Variable()};
      },
      [](const Tangents& t) {
        return t.sum({t.has(0) ? t[0] : Variable(), t.has(1) ? neg(t[1]) : Variable()});
      });
}

Variable mul(const Variable& a, const Variable& b) {
  // d(a·b)/da = b, d(a·b)/db = a: each operand is kept only if the other needs its gradient.
  return record(
      "mul", mul(a.data(), b.data()), {a, b},
      [sa = save_if(a, b.requires_grad()), sb = save_if(b, a.requires_grad()), shape_a = a.shape(),
       shape_b = b.shape()](const Variable& g, NeedsGrad needs) -> VariableGrads {
        return {needs[0] ? sum_to(mul(g, sb.variable()), shape_a) : Variable(),
                needs[1] ? sum_to(mul(g, sa.variable()), shape_b) : Variable()};
      },
      // (a·b)˙ = ȧ·b + a·ḃ
      [&](const Tangents& t) {
        return t.sum({t.has(0) ? t[0] * b : Variable(), t.has(1) ? a * t[1] : Variable()});
      });
}

Variable div(const Variable& a, const Variable& b) {
  // d(a/b)/da = 1/b, d(a/b)/db = -a/b²: b is always needed, a only for b's gradient.
  return record(
      "div", div(a.data(), b.data()), {a, b},
      [sa = save_if(a, b.requires_grad()), sb = SavedTensor(b), shape_a = a.shape()](
          const Variable& g, NeedsGrad needs) -> VariableGrads {
        const Variable b = sb.variable();
        const Variable g_over_b = div(g, b);
        return {needs[0] ? sum_to(g_over_b, shape_a) : Variable(),
                needs[1] ? sum_to(neg(mul(g_over_b, div(sa.variable(), b))), b.shape()) : Variable()};
      },
      // (a/b)˙ = ȧ/b - a·ḃ/b² = ȧ/b - y·ḃ/b
      [&](const Tangents& t) {
        return t.sum({t.has(0) ? t[0] / b : Variable(), t.has(1) ? neg(t.output() * t[1] / b) : Variable()});
      });
}

Variable neg(const Variable& x) {
  return record(
      "neg", neg(x.data()), {x}, [](const Variable& g, NeedsGrad) -> VariableGrads { return {neg(g)}; },
      [](const Tangents& t) { return neg(t[0]); });
}

Variable add(const Variable& x, double s) {
  return record(
      "add_scalar", add(x.data(), s), {x}, [](const Variable& g, NeedsGrad) -> VariableGrads { return {g}; },
      [](const Tangents& t) { return t[0]; });
}

Variable mul(const Variable& x, double s) {
  return record(
      "mul_scalar", mul(x.data(), s), {x},
      [s](const Variable& g, NeedsGrad) -> VariableGrads { return {mul(g, s)}; },
      [s](const Tangents& t) { return mul(t[0], s); });
}

Variable div(const Variable& x, double s) {
  return record(
      "div_scalar", div(x.data(), s), {x},
      [s](const Variable& g, NeedsGrad) -> VariableGrads { return {div(g, s)}; },
      [s](const Tangents& t) { return div(t[0], s); });
}

Variable rsub(double s, const Variable& x) {
  return record(
      "rsub_scalar", rsub(s, x.data()), {x},
      [](const Variable& g, NeedsGrad) -> VariableGrads { return {neg(g)}; },
      [](const Tangents& t) { return neg(t[0]); });
}

Variable rdiv(double s, const Variable& x) {
  Tensor y = rdiv(s, x.data());
  // d(s/x)/dx = -s/x² = -y/x
  return record(
      "rdiv_scalar", y, {x},
      [sx = SavedTensor(x), sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
        return {neg(div(mul(g, sy.output_variable(needs)), sx.variable()))};
      },
      [&](const Tangents& t) { return neg(t[0] * t.output() / x); });
}

Variable pow_backward(const Variable& g, const Variable& x, double exponent) {
  // d/dg = p·x^(p-1): this op again. d/dx = g·p·(p-1)·x^(p-2) = p · pow_backward(g, x, p - 1), and 0 for
  // p = 0, where the first derivative is the constant 0 (not 0·x^-1, NaN at x = 0), as PyTorch.
  return record(
      "pow_backward", pow_backward(g.data(), x.data(), exponent), {g, x},
      [sg = save_if(g, x.requires_grad()), sx = SavedTensor(x), exponent](const Variable& gg,
                                                                          NeedsGrad needs) -> VariableGrads {
        return {needs[0] ? pow_backward(gg, sx.variable(), exponent) : Variable(),
                needs[1] && exponent != 0
                    ? mul(pow_backward(mul(gg, sg.variable()), sx.variable(), exponent - 1), exponent)
                    : Variable()};
      },
      [&](const Tangents& t) {  // linear in g; in x, as the backward's second gradient
        return t.sum({t.has(0) ? pow_backward(t[0], x, exponent) : Variable(),
                      t.has(1) && exponent != 0 ? mul(pow_backward(g * t[1], x, exponent - 1), exponent)
                                                : Variable()});
      });
}

Variable pow(const Variable& x, double exponent) {
  // d(x^p)/dx = p·x^(p-1)
  return record(
      "pow", pow(x.data(), exponent), {x},
      [sx = SavedTensor(x), exponent](const Variable& g, NeedsGrad) -> VariableGrads {
        return {pow_backward(g, sx.variable(), exponent)};
      },
      [&](const Tangents& t) { return pow_backward(t[0], x, exponent); });  // ẋ·p·x^(p-1)
}

}  // namespace minigrad

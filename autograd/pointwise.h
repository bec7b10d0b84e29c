// Elementwise ops whose derivative is a formula: stated once, it gives the fused backward kernel and
// every higher derivative.
//
//   // tanh' = 1 - tanh² = 1 - y²
//   Variable tanh(const Variable& x) {
//     return pointwise({"tanh", "tanh_backward"}, x, tanh(x.data()), DerivativeOf::Output,
//                      [](auto y) { return 1 - y * y; });
//   }
//
// The formula f is a generic lambda of one value v: the op's input x or its output y, whichever makes
// it cheapest. It is evaluated two ways:
//   - on numbers (float, double), inside one fused pass over the upstream gradient: backward computes
//     g·f(v) (mul_map, tensor/map.h) and records it as the named backward op ("tanh_backward");
//   - on Dual values (below), which carry a Variable and its slope: f({v, 1}) = {f(v), f'(v)}. That is
//     the named op's own derivative in v, g·gg·f'(v), written with differentiable ops, so the named op
//     has derivatives of every order without a second formula.
// The named op's derivative in g is f(v) again: the named op itself.
#pragma once

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/map.h"

namespace minigrad {

// Which value the derivative formula takes: the op's input x, or its output y (tanh' = 1 - y²).
enum class DerivativeOf { Input, Output };

// The op's name, and its named backward op's (both shown in graphs and errors).
struct PointwiseNames {
  const char* op;
  const char* backward_op;
};

// value + slope·ε with ε² = 0 (a dual number): arithmetic on Duals differentiates as it goes, so
// evaluating a formula on {v, 1} gives {f(v), f'(v)} (forward-mode differentiation, one step deep).
struct Dual {
  Variable value, slope;
};
inline Dual operator+(const Dual& a, const Dual& b) {
  return {a.value + b.value, a.slope + b.slope};
}
inline Dual operator-(const Dual& a, const Dual& b) {
  return {a.value - b.value, a.slope - b.slope};
}
inline Dual operator*(const Dual& a, const Dual& b) {  // (uv)' = u'v + uv'
  return {a.value * b.value, a.slope * b.value + a.value * b.slope};
}
inline Dual operator/(const Dual& a, const Dual& b) {  // (u/v)' = (u'v - uv') / v²
  return {a.value / b.value, (a.slope * b.value - a.value * b.slope) / (b.value * b.value)};
}
inline Dual operator-(const Dual& a) {
  return {-a.value, -a.slope};
}
// A number s is a Dual with slope 0.
inline Dual operator+(const Dual& a, double s) {
  return {a.value + s, a.slope};
}
inline Dual operator+(double s, const Dual& a) {
  return a + s;
}
inline Dual operator-(const Dual& a, double s) {
  return {a.value - s, a.slope};
}
inline Dual operator-(double s, const Dual& a) {
  return {s - a.value, -a.slope};
}
inline Dual operator*(const Dual& a, double s) {
  return {a.value * s, a.slope * s};
}
inline Dual operator*(double s, const Dual& a) {
  return a * s;
}
inline Dual operator/(const Dual& a, double s) {
  return {a.value / s, a.slope / s};
}
inline Dual operator/(double s, const Dual& a) {  // (s/u)' = -s·u'/u²
  return {s / a.value, -s * a.slope / (a.value * a.value)};
}

namespace detail {

// The named backward op: g·f(v), one fused pass, recorded with its own derivative (see the top).
template <typename F>
Variable pointwise_backward(const char* name, const Variable& g, const Variable& v, F f) {
  return record(
      name, mul_map(name, g.data(), v.data(), f), {g, v},
      [name, f, sg = save_if(g, v.requires_grad()), sv = SavedTensor(v)](const Variable& gg,
                                                                         NeedsGrad needs) -> VariableGrads {
        const Variable v = sv.variable();
        const Variable one(Tensor::ones(v.shape(), v.dtype()));
        return {needs[0] ? pointwise_backward(name, gg, v, f) : Variable(),
                needs[1] ? gg * sg.variable() * f(Dual{v, one}).slope : Variable()};
      },
      [&](const Tangents& t) {  // ġ·f(v) + g·v̇·f'(v)
        if (!t.has(1)) return pointwise_backward(name, t[0], v, f);
        const Variable one(Tensor::ones(v.shape(), v.dtype()));
        return t.sum(
            {t.has(0) ? pointwise_backward(name, t[0], v, f) : Variable(), g * t[1] * f(Dual{v, one}).slope});
      });
}

}  // namespace detail

// Records y = op(x), computed by the caller, whose derivative is f(x) or f(y).
template <typename F>
Variable pointwise(PointwiseNames names, const Variable& x, Tensor y, DerivativeOf of, F f) {
  if (of == DerivativeOf::Output) {
    return record(
        names.op, y, {x},
        [names, f, sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
          return {detail::pointwise_backward(names.backward_op, g, sy.output_variable(needs), f)};
        },
        [&](const Tangents& t) {  // ẋ·f(y)
          return detail::pointwise_backward(names.backward_op, t[0], t.output(), f);
        });
  }
  return record(
      names.op, std::move(y), {x},
      [names, f, sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {detail::pointwise_backward(names.backward_op, g, sx.variable(), f)};
      },
      [&](const Tangents& t) {  // ẋ·f(x)
        return detail::pointwise_backward(names.backward_op, t[0], x, f);
      });
}

}  // namespace minigrad

// Elementwise functions. Where the derivative is more than one product, the backward calls a named
// backward op (tanh_backward, ...): one fused pass over the upstream gradient and whichever of the input
// x or the output y makes the derivative cheapest. Each named backward op is itself an op, with a
// derivative of its own, so gradients of any order exist.
#include <cmath>
#include <numbers>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable exp(const Variable& x) {
  Tensor y = exp(x.data());
  return record("exp", y, {x}, [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
    return {mul(g, sy.output_variable(needs))};  // (e^x)' = e^x = y
  });
}

Variable log(const Variable& x) {
  return record("log", log(x.data()), {x},
                [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                  return {div(g, sx.variable())};  // (log x)' = 1/x
                });
}

// ---- sqrt: (√x)' = 1 / (2√x) = 1 / (2y) ----

Tensor sqrt_backward(const Tensor& g, const Tensor& y) {
  return zip_float("sqrt_backward", g, y, [](auto g, auto y) { return g / (2 * y); });
}

Variable sqrt_backward(const Variable& g, const Variable& y) {
  // d/dg = 1/(2y): this op again. d/dy = -g/(2y²) = -sqrt_backward(g, y)/y.
  return record("sqrt_backward", sqrt_backward(g.data(), y.data()), {g, y},
                [sg = save_if(g, y.requires_grad()), sy = SavedTensor(y)](const Variable& gg,
                                                                          NeedsGrad needs) -> VariableGrads {
                  const Variable y = sy.variable();
                  return {needs[0] ? sqrt_backward(gg, y) : Variable(),
                          needs[1] ? neg(div(sqrt_backward(mul(gg, sg.variable()), y), y)) : Variable()};
                });
}

Variable sqrt(const Variable& x) {
  Tensor y = sqrt(x.data());
  return record("sqrt", y, {x}, [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
    return {sqrt_backward(g, sy.output_variable(needs))};
  });
}

// ---- tanh: tanh' = 1 - tanh² = 1 - y² ----

Tensor tanh_backward(const Tensor& g, const Tensor& y) {
  return zip_float("tanh_backward", g, y, [](auto g, auto y) { return g * (1 - y * y); });
}

Variable tanh_backward(const Variable& g, const Variable& y) {
  // d/dg = 1 - y²: this op again. d/dy = -2·g·y.
  return record("tanh_backward", tanh_backward(g.data(), y.data()), {g, y},
                [sg = save_if(g, y.requires_grad()), sy = SavedTensor(y)](const Variable& gg,
                                                                          NeedsGrad needs) -> VariableGrads {
                  return {needs[0] ? tanh_backward(gg, sy.variable()) : Variable(),
                          needs[1] ? mul(mul(gg, sg.variable()), mul(sy.variable(), -2.0)) : Variable()};
                });
}

Variable tanh(const Variable& x) {
  Tensor y = tanh(x.data());
  return record("tanh", y, {x}, [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
    return {tanh_backward(g, sy.output_variable(needs))};
  });
}

// ---- sigmoid: σ' = σ(1 - σ) = y(1 - y) ----

Tensor sigmoid_backward(const Tensor& g, const Tensor& y) {
  return zip_float("sigmoid_backward", g, y, [](auto g, auto y) { return g * y * (1 - y); });
}

Variable sigmoid_backward(const Variable& g, const Variable& y) {
  // d/dg = y(1 - y): this op again. d/dy = g·(1 - 2y).
  return record(
      "sigmoid_backward", sigmoid_backward(g.data(), y.data()), {g, y},
      [sg = save_if(g, y.requires_grad()), sy = SavedTensor(y)](const Variable& gg,
                                                                NeedsGrad needs) -> VariableGrads {
        return {needs[0] ? sigmoid_backward(gg, sy.variable()) : Variable(),
                needs[1] ? mul(mul(gg, sg.variable()), rsub(1.0, mul(sy.variable(), 2.0))) : Variable()};
      });
}

Variable sigmoid(const Variable& x) {
  Tensor y = sigmoid(x.data());
  return record("sigmoid", y, {x},
                [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
                  return {sigmoid_backward(g, sy.output_variable(needs))};
                });
}

// ---- relu: 1 where x > 0, else 0 (at the kink x = 0 PyTorch also takes 0) ----

// PyTorch's threshold_backward: 0 where x <= 0, else g. At x = NaN the comparison is false and g passes,
// so a NaN input keeps its upstream gradient, as in PyTorch, rather than a silent 0.
Tensor relu_backward(const Tensor& g, const Tensor& x) {
  return zip_float("relu_backward", g, x, [](auto g, auto x) { return x <= 0 ? decltype(g)(0) : g; });
}

Variable relu_backward(const Variable& g, const Tensor& x) {
  // Linear in g with a constant mask: d/dg is this op again, and x gets no gradient (relu'' = 0).
  return record("relu_backward", relu_backward(g.data(), x), {g},
                [sx = SavedTensor(x)](const Variable& gg, NeedsGrad) -> VariableGrads {
                  return {relu_backward(gg, sx.get())};
                });
}

Variable relu(const Variable& x) {
  return record("relu", relu(x.data()), {x},
                [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                  return {relu_backward(g, sx.get())};
                });
}

// ---- gelu(x) = x·Φ(x): gelu'(x) = Φ(x) + x·φ(x), gelu''(x) = φ(x)·(2 - x²), φ the normal density ----

namespace {

template <typename T>
T gelu_slope(T x) {
  const T cdf = T(0.5) * (1 + std::erf(x * T(std::numbers::sqrt2 / 2)));
  return cdf + x * std::exp(T(-0.5) * x * x) * T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
}

}  // namespace

Tensor gelu_backward(const Tensor& g, const Tensor& x) {
  return zip_float("gelu_backward", g, x, [](auto g, auto x) { return g * gelu_slope(x); });
}

Variable gelu_backward(const Variable& g, const Variable& x) {
  // d/dg = gelu'(x): this op again. d/dx = g·gelu''(x) = g·φ(x)·(2 - x²), φ(x) = e^{-x²/2} / √(2π).
  return record("gelu_backward", gelu_backward(g.data(), x.data()), {g, x},
                [sg = save_if(g, x.requires_grad()), sx = SavedTensor(x)](const Variable& gg,
                                                                          NeedsGrad needs) -> VariableGrads {
                  const Variable x = sx.variable();
                  Variable dg, dx;
                  if (needs[0]) dg = gelu_backward(gg, x);
                  if (needs[1]) {
                    const Variable x_squared = mul(x, x);
                    const Variable density =
                        mul(exp(mul(x_squared, -0.5)), std::numbers::inv_sqrtpi / std::numbers::sqrt2);
                    dx = mul(mul(gg, sg.variable()), mul(density, rsub(2.0, x_squared)));
                  }
                  return {dg, dx};
                });
}

Variable gelu(const Variable& x) {
  return record("gelu", gelu(x.data()), {x},
                [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                  return {gelu_backward(g, sx.variable())};
                });
}

// ---- abs: |x|' = sign(x), taken as 0 at the kink x = 0, as PyTorch does ----

Variable abs(const Variable& x) {
  // The sign is a constant: abs'' = 0 away from the kink.
  return record("abs", abs(x.data()), {x},
                [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                  const Tensor sign = map_float("abs_backward", sx.get(), [](auto v) {
                    using T = decltype(v);
                    return v > 0 ? T(1) : (v < 0 ? T(-1) : T(0));
                  });
                  return {mul(g, Variable(sign))};
                });
}

}  // namespace minigrad

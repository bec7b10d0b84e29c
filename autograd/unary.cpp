// Elementwise functions. Where the derivative is more than one product, the backward calls a named
// backward op (tanh_backward, ...): one fused pass over the upstream gradient and whichever of the input
// x or the output y makes the derivative cheapest. Each named backward op is itself an op, with a
// derivative of its own, so gradients of any order exist. Where the derivative is a formula of x or y
// alone, pointwise (autograd/pointwise.h) makes both from the formula, written once.
#include <cmath>
#include <numbers>

#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/pointwise.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Variable exp(const Variable& x) {
  Tensor y = exp(x.data());
  return record(
      "exp", y, {x},
      [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
        return {mul(g, sy.output_variable(needs))};  // (e^x)' = e^x = y
      },
      [](const Tangents& t) { return t[0] * t.output(); });
}

Variable log(const Variable& x) {
  return record(
      "log", log(x.data()), {x},
      [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {div(g, sx.variable())};  // (log x)' = 1/x
      },
      [&](const Tangents& t) { return t[0] / x; });
}

// (log(1 + x))' = 1 / (1 + x), a formula of the input (autograd/pointwise.h)
Variable log1p(const Variable& x) {
  return pointwise({"log1p", "log1p_backward"}, x, log1p(x.data()), DerivativeOf::Input,
                   [](auto x) { return 1 / (1 + x); });
}

// ---- sqrt, tanh, sigmoid: a derivative formula of the output y (autograd/pointwise.h) ----

// (√x)' = 1 / (2√x) = 1 / (2y)
Variable sqrt(const Variable& x) {
  return pointwise({"sqrt", "sqrt_backward"}, x, sqrt(x.data()), DerivativeOf::Output,
                   [](auto y) { return 1 / (2 * y); });
}

// tanh' = 1 - tanh² = 1 - y²
Variable tanh(const Variable& x) {
  return pointwise({"tanh", "tanh_backward"}, x, tanh(x.data()), DerivativeOf::Output,
                   [](auto y) { return 1 - y * y; });
}

// σ' = σ(1 - σ) = y(1 - y)
Variable sigmoid(const Variable& x) {
  return pointwise({"sigmoid", "sigmoid_backward"}, x, sigmoid(x.data()), DerivativeOf::Output,
                   [](auto y) { return y * (1 - y); });
}

// ---- relu: 1 where x > 0, else 0 (at the kink x = 0 PyTorch also takes 0) ----

Variable relu_backward(const Variable& g, const Tensor& x) {
  // Linear in g with a constant mask: d/dg is this op again, and x gets no gradient (relu'' = 0).
  return record(
      "relu_backward", relu_backward(g.data(), x), {g},
      [sx = SavedTensor(x)](const Variable& gg, NeedsGrad) -> VariableGrads {
        return {relu_backward(gg, sx.get())};
      },
      [&](const Tangents& t) { return relu_backward(t[0], x); });
}

Variable relu(const Variable& x) {
  return record(
      "relu", relu(x.data()), {x},
      [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {relu_backward(g, sx.get())};
      },
      [&](const Tangents& t) { return relu_backward(t[0], x.data()); });  // ẋ where x > 0
}

// ---- leaky_relu: 1 where x > 0, else negative_slope ----

Variable leaky_relu_backward(const Variable& g, const Tensor& x, double negative_slope) {
  // Linear in g with constant slopes: d/dg is this op again, and x gets no gradient.
  return record(
      "leaky_relu_backward", leaky_relu_backward(g.data(), x, negative_slope), {g},
      [sx = SavedTensor(x), negative_slope](const Variable& gg, NeedsGrad) -> VariableGrads {
        return {leaky_relu_backward(gg, sx.get(), negative_slope)};
      },
      [&](const Tangents& t) { return leaky_relu_backward(t[0], x, negative_slope); });
}

Variable leaky_relu(const Variable& x, double negative_slope) {
  return record(
      "leaky_relu", leaky_relu(x.data(), negative_slope), {x},
      [sx = SavedTensor(x), negative_slope](const Variable& g, NeedsGrad) -> VariableGrads {
        return {leaky_relu_backward(g, sx.get(), negative_slope)};
      },
      [&](const Tangents& t) { return leaky_relu_backward(t[0], x.data(), negative_slope); });
}

// ---- silu, elu, softplus: compositions, so every derivative comes from their parts ----
// A branch a `where` does not choose still has its backward run with a zero gradient, and 0·inf is NaN;
// so each branch that could overflow is fed its input only where it is chosen (masked_fill elsewhere).

// x·σ(x), PyTorch's SiLU (swish)
Variable silu(const Variable& x) {
  return mul(x, sigmoid(x));
}

// x where x > 0, else alpha·(e^x - 1)
Variable elu(const Variable& x, double alpha) {
  const Tensor positive = gt(x.data(), 0.0);
  return where(positive, x, mul(add(exp(masked_fill(x, positive, 0.0)), -1.0), alpha));
}

// log(1 + e^(beta·x)) / beta, and x itself where beta·x > threshold (where the two agree to float64's
// precision), as PyTorch's Softplus.
Variable softplus(const Variable& x, double beta, double threshold) {
  const Variable z = mul(x, beta);
  const Tensor linear = gt(z.data(), threshold);
  return where(linear, x, div(log1p(exp(masked_fill(z, linear, 0.0))), beta));
}

// ---- gelu(x) = x·Φ(x): gelu'(x) = Φ(x) + x·φ(x), gelu''(x) = φ(x)·(2 - x²), φ the normal density ----

namespace {
// gelu''(x) = φ(x)·(2 - x²), φ(x) = e^{-x²/2} / √(2π)
Variable gelu_second_derivative(const Variable& x) {
  const Variable x_squared = mul(x, x);
  const Variable density = mul(exp(mul(x_squared, -0.5)), std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  return mul(density, rsub(2.0, x_squared));
}
}  // namespace

Variable gelu_backward(const Variable& g, const Variable& x) {
  // d/dg = gelu'(x): this op again. d/dx = g·gelu''(x).
  return record(
      "gelu_backward", gelu_backward(g.data(), x.data()), {g, x},
      [sg = save_if(g, x.requires_grad()), sx = SavedTensor(x)](const Variable& gg,
                                                                NeedsGrad needs) -> VariableGrads {
        const Variable x = sx.variable();
        return {needs[0] ? gelu_backward(gg, x) : Variable(),
                needs[1] ? mul(gg, sg.variable()) * gelu_second_derivative(x) : Variable()};
      },
      [&](const Tangents& t) {
        return t.sum({t.has(0) ? gelu_backward(t[0], x) : Variable(),
                      t.has(1) ? g * t[1] * gelu_second_derivative(x) : Variable()});
      });
}

Variable gelu(const Variable& x) {
  return record(
      "gelu", gelu(x.data()), {x},
      [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {gelu_backward(g, sx.variable())};
      },
      [&](const Tangents& t) { return gelu_backward(t[0], x); });  // ẋ·gelu'(x)
}

// ---- abs: |x|' = sign(x), taken as 0 at the kink x = 0, as PyTorch does ----

Variable abs(const Variable& x) {
  // The sign is a constant: abs'' = 0 away from the kink.
  return record(
      "abs", abs(x.data()), {x},
      [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {mul(g, Variable(sign(sx.get())))};
      },
      [&](const Tangents& t) { return t[0] * Variable(sign(x.data())); });
}

}  // namespace minigrad

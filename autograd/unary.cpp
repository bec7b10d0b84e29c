// Elementwise functions. Each first-order backward is one fused pass over the upstream gradient and
// whichever of the input x or the output y makes the derivative cheapest; the differentiable backward
// writes the same formula with differentiable ops (for create_graph).
#include <cmath>
#include <numbers>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable exp(const Variable& x) {
  Tensor y = exp(x.data());
  return record("exp", y, {x}, [sy = SavedTensor(y)]<typename G>(const G& g, NeedsGrad needs) {
    return GradsOf<G>{mul(g, sy.output_as<G>(needs))};  // (e^x)' = e^x = y
  });
}

Variable log(const Variable& x) {
  return record("log", log(x.data()), {x}, [sx = SavedTensor(x)]<typename G>(const G& g, NeedsGrad) {
    return GradsOf<G>{div(g, sx.as<G>())};  // (log x)' = 1/x
  });
}

Variable sqrt(const Variable& x) {
  Tensor y = sqrt(x.data());
  // (√x)' = 1 / (2√x) = 1 / (2y)
  return record(
      "sqrt", y, {x},
      Backward{[sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
                 return {zip_float("sqrt_backward", g, sy.get(), [](auto g, auto y) { return g / (2 * y); })};
               },
               [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
                 return {div(g, mul(sy.output_variable(needs), 2.0))};
               }});
}

Variable tanh(const Variable& x) {
  Tensor y = tanh(x.data());
  // tanh' = 1 - tanh² = 1 - y²
  return record("tanh", y, {x},
                Backward{[sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
                           return {zip_float("tanh_backward", g, sy.get(),
                                             [](auto g, auto y) { return g * (1 - y * y); })};
                         },
                         [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
                           const Variable y = sy.output_variable(needs);
                           return {mul(g, rsub(1.0, mul(y, y)))};
                         }});
}

Variable sigmoid(const Variable& x) {
  Tensor y = sigmoid(x.data());
  // σ' = σ(1 - σ) = y(1 - y)
  return record("sigmoid", y, {x},
                Backward{[sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
                           return {zip_float("sigmoid_backward", g, sy.get(),
                                             [](auto g, auto y) { return g * y * (1 - y); })};
                         },
                         [sy = SavedTensor(y)](const Variable& g, NeedsGrad needs) -> VariableGrads {
                           const Variable y = sy.output_variable(needs);
                           return {mul(g, mul(y, rsub(1.0, y)))};
                         }});
}

Variable relu(const Variable& x) {
  // 1 where x > 0, else 0 (at the kink x = 0 PyTorch also takes 0). The mask is a constant: relu'' = 0.
  return record("relu", relu(x.data()), {x},
                Backward{[sx = SavedTensor(x)](const Tensor& g, NeedsGrad) -> Grads {
                           return {zip_float("relu_backward", g, sx.get(),
                                             [](auto g, auto x) { return x > 0 ? g : decltype(g)(0); })};
                         },
                         [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                           const Tensor& x = sx.get();
                           const Tensor positive =
                               where(gt(x, 0.0), Tensor::scalar(1, x.dtype()), Tensor::scalar(0, x.dtype()));
                           return {mul(g, Variable(positive))};
                         }});
}

namespace {

// gelu'(x) = Φ(x) + x·φ(x) and gelu''(x) = φ(x)·(2 - x²), φ the standard normal density.
template <typename T>
T gelu_slope(T x) {
  const T cdf = T(0.5) * (1 + std::erf(x * T(std::numbers::sqrt2 / 2)));
  return cdf + x * std::exp(T(-0.5) * x * x) * T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
}
template <typename T>
T gelu_curvature(T x) {
  return std::exp(T(-0.5) * x * x) * T(std::numbers::inv_sqrtpi / std::numbers::sqrt2) * (2 - x * x);
}

// g·gelu'(x) as an op of its own (inputs g and x), so that gelu's gradient can be differentiated again:
// d/dg = gelu'(x), d/dx = g·gelu''(x). Its own differentiable backward uses this op again for d/dg and
// composes gelu''(x) = φ(x)·(2 - x²) from differentiable ops, so derivatives of any order exist.
Variable gelu_backward(const Variable& g, const Variable& x) {
  return record(
      "gelu_backward",
      zip_float("gelu_backward", g.data(), x.data(), [](auto g, auto x) { return g * gelu_slope(x); }),
      {g, x},
      Backward{[sg = save_if(g, x.requires_grad()), sx = SavedTensor(x)](const Tensor& gg,
                                                                         NeedsGrad needs) -> Grads {
                 Tensor dg, dx;
                 if (needs[0]) {
                   dg = zip_float("gelu_backward", gg, sx.get(),
                                  [](auto gg, auto x) { return gg * gelu_slope(x); });
                 }
                 if (needs[1]) {
                   dx = zip_float("gelu_double_backward", mul(gg, sg.get()), sx.get(),
                                  [](auto ggg, auto x) { return ggg * gelu_curvature(x); });
                 }
                 return {dg, dx};
               },
               [sg = save_if(g, x.requires_grad()), sx = SavedTensor(x)](const Variable& gg,
                                                                         NeedsGrad needs) -> VariableGrads {
                 const Variable x = sx.variable();
                 Variable dg, dx;
                 if (needs[0]) dg = gelu_backward(gg, x);
                 if (needs[1]) {
                   const Variable x_squared = mul(x, x);
                   const Variable density =  // φ(x) = e^{-x²/2} / √(2π)
                       mul(exp(mul(x_squared, -0.5)), std::numbers::inv_sqrtpi / std::numbers::sqrt2);
                   dx = mul(mul(gg, sg.variable()), mul(density, add(neg(x_squared), 2.0)));
                 }
                 return {dg, dx};
               }});
}

}  // namespace

Variable gelu(const Variable& x) {
  // gelu(x) = x·Φ(x)  =>  gelu'(x) = Φ(x) + x·φ(x)
  return record("gelu", gelu(x.data()), {x},
                Backward{[sx = SavedTensor(x)](const Tensor& g, NeedsGrad) -> Grads {
                           return {zip_float("gelu_backward", g, sx.get(),
                                             [](auto g, auto x) { return g * gelu_slope(x); })};
                         },
                         [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
                           return {gelu_backward(g, sx.variable())};
                         }});
}

}  // namespace minigrad

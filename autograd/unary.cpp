// Elementwise functions. Each backward is one fused pass over the upstream gradient and whichever of
// the input x or the output y makes the derivative cheapest.
#include <cmath>
#include <numbers>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable exp(const Variable& x) {
  Tensor y = exp(x.data());
  return record("exp", y, {x}, [sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
    return {mul(g, sy.get())};  // (e^x)' = e^x = y
  });
}

Variable log(const Variable& x) {
  return record("log", log(x.data()), {x}, [sx = SavedTensor(x.data())](const Tensor& g, NeedsGrad) -> Grads {
    return {div(g, sx.get())};  // (log x)' = 1/x
  });
}

Variable sqrt(const Variable& x) {
  Tensor y = sqrt(x.data());
  return record("sqrt", y, {x}, [sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
    // (√x)' = 1 / (2√x) = 1 / (2y)
    return {zip_float("sqrt_backward", g, sy.get(), [](auto g, auto y) { return g / (2 * y); })};
  });
}

Variable tanh(const Variable& x) {
  Tensor y = tanh(x.data());
  return record("tanh", y, {x}, [sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
    // tanh' = 1 - tanh² = 1 - y²
    return {zip_float("tanh_backward", g, sy.get(), [](auto g, auto y) { return g * (1 - y * y); })};
  });
}

Variable sigmoid(const Variable& x) {
  Tensor y = sigmoid(x.data());
  return record("sigmoid", y, {x}, [sy = SavedTensor(y)](const Tensor& g, NeedsGrad) -> Grads {
    // σ' = σ(1 - σ) = y(1 - y)
    return {zip_float("sigmoid_backward", g, sy.get(), [](auto g, auto y) { return g * y * (1 - y); })};
  });
}

Variable relu(const Variable& x) {
  return record("relu", relu(x.data()), {x},
                [sx = SavedTensor(x.data())](const Tensor& g, NeedsGrad) -> Grads {
                  // 1 where x > 0, else 0 (at the kink x = 0 PyTorch also takes 0)
                  return {zip_float("relu_backward", g, sx.get(),
                                    [](auto g, auto x) { return x > 0 ? g : decltype(g)(0); })};
                });
}

Variable gelu(const Variable& x) {
  return record(
      "gelu", gelu(x.data()), {x}, [sx = SavedTensor(x.data())](const Tensor& g, NeedsGrad) -> Grads {
        // gelu(x) = x·Φ(x)  =>  gelu'(x) = Φ(x) + x·φ(x), φ the standard normal density
        return {zip_float("gelu_backward", g, sx.get(), [](auto g, auto x) {
          using T = decltype(x);
          const T cdf = T(0.5) * (1 + std::erf(x * T(std::numbers::sqrt2 / 2)));
          const T pdf = std::exp(T(-0.5) * x * x) * T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
          return g * (cdf + x * pdf);
        })};
      });
}

}  // namespace minigrad

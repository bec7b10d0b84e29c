// Task 8's answer.
#include "exercises/08_adam_step.h"

#include <cmath>

namespace minigrad::exercises {

void MyAdam::step() {
  NoGradGuard no_grad;
  const double b1 = options.beta1, b2 = options.beta2;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const Variable& p = parameters_[i];
    if (!p.grad().defined()) continue;
    std::map<std::string, Tensor>& state = state_[i];
    if (state.empty()) {
      state["step"] = Tensor::zeros({}, DType::Int64);
      state["exp_avg"] = Tensor::zeros(p.shape(), p.dtype());
      state["exp_avg_sq"] = Tensor::zeros(p.shape(), p.dtype());
    }
    const double t = state["step"].item() + 1;
    state["step"].fill_(t);
    const Tensor& g = p.grad();
    const Tensor& m = state["exp_avg"].mul_(b1).add_(g, 1 - b1);             // β1·m + (1 − β1)·g
    const Tensor& v = state["exp_avg_sq"].mul_(b2).add_(mul(g, g), 1 - b2);  // β2·v + (1 − β2)·g²
    // m̂ / (√v̂ + eps) with m̂ = m / (1 − β1^t) and √v̂ = √v / √(1 − β2^t)
    const double correction1 = 1 - std::pow(b1, t), correction2 = 1 - std::pow(b2, t);
    p.data().add_(div(m, add(div(sqrt(v), std::sqrt(correction2)), options.eps)), -lr_ / correction1);
  }
}

}  // namespace minigrad::exercises

// Task 9's answer.
#include "exercises/09_forward_mode.h"

namespace minigrad::exercises {

Variable my_logsumexp_tangent(const Variable& x, const Tangents& t) {
  // ẏ[n] = Σ_c softmax(x)[n][c]·ẋ[n][c]: the backward's weights, summed against ẋ instead of spread
  return sum(mul(softmax(x, 1), t[0]), {1});
}

Variable my_jvp(const std::function<Variable(const Variable&)>& f, const Variable& x, const Variable& v) {
  const forward_ad::DualLevel level;  // the tangents live while it does
  const Variable y = f(forward_ad::make_dual(x, v));
  const Variable jv = forward_ad::unpack_dual(y).tangent;  // a handle of its own: it outlives the level
  return jv.defined() ? jv : Variable(Tensor::zeros(y.shape(), y.dtype()));
}

}  // namespace minigrad::exercises

// Layer normalization over the last dimension: the op, its checks and its recorded backward. The fused
// forward and backward kernels, and the derivation of the backward, are in tensor/layer_norm.h.
#include <array>
#include <cmath>
#include <vector>

#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/norm_backward.h"
#include "minigrad/tensor/layer_norm.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

VariableGrads layer_norm_backward(const Variable& g, const Variable& x, const Variable& weight,
                                  const Tensor& mean, const Tensor& rstd, double eps,
                                  std::array<bool, 3> needs) {
  const bool affine = weight.defined();
  if (!detail::norm_backward_records(g, x, weight)) {  // the fused kernel
    return detail::as_variables(
        layer_norm_backward(g.data(), x.data(), affine ? weight.data() : Tensor(), mean, rstd, needs));
  }
  // Recorded (create_graph): the kernel's three outputs would need a node each, so the same formulas are
  // composed from differentiable ops instead, with x̂ and rstd recomputed from x so that their dependence
  // on x is in the graph. gradgradcheck holds the two against each other.
  const int64_t d = x.shape().back();
  const Variable centered = sub(x, minigrad::mean(x, {-1}, /*keepdim=*/true));
  const Variable r = pow(add(minigrad::mean(mul(centered, centered), {-1}, /*keepdim=*/true), eps), -0.5);
  const Variable xhat = mul(centered, r);
  const Variable ghat = affine ? mul(g, weight) : g;
  VariableGrads grads(3);
  if (needs[0]) {
    grads[0] = mul(r, sub(sub(ghat, minigrad::mean(ghat, {-1}, true)),
                          mul(xhat, minigrad::mean(mul(ghat, xhat), {-1}, true))));
  }
  if (needs[1]) grads[1] = sum_to(mul(g, xhat), Shape{d});
  if (needs[2]) grads[2] = sum_to(g, Shape{d});
  return grads;
}

Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, double eps) {
  if (!x.defined()) throw ValueError("layer_norm", "the input is undefined");
  if (x.rank() < 1) throw ShapeError("layer_norm", "expects an input of rank >= 1, got a scalar");
  if (weight.defined() != bias.defined()) {
    throw ValueError("layer_norm", "weight and bias must both be given or both be undefined");
  }
  const int64_t d = x.shape().back();
  const bool affine = weight.defined();
  if (affine) {
    for (const Variable* p : {&weight, &bias}) {
      if (p->shape() != Shape{d}) {
        throw ShapeError("layer_norm", "weight and bias must have shape [" + std::to_string(d) +
                                           "] for an input of shape " + x.shape().str() + ", got " +
                                           p->shape().str());
      }
      if (p->dtype() != x.dtype()) throw DTypeError("layer_norm", "weight, bias and input dtypes differ");
    }
  }
  if (!(eps >= 0)) throw ValueError("layer_norm", "eps must be non-negative");

  const LayerNormForward out =
      layer_norm_forward(x.data(), affine ? weight.data() : Tensor(), affine ? bias.data() : Tensor(), eps);
  // What the gradients need: x always, the weight for dx, and the mean and rstd per row.
  const SavedTensor sx(x), sw = affine ? save_if(weight, x.requires_grad()) : SavedTensor();
  const SavedTensor saved_mean(out.mean), saved_rstd(out.rstd);
  auto backward = [sx, sw, saved_mean, saved_rstd, eps, affine](const Variable& g,
                                                                NeedsGrad needs) -> VariableGrads {
    VariableGrads grads =
        layer_norm_backward(g, sx.variable(), sw.defined() ? sw.variable() : Variable(), saved_mean.get(),
                            saved_rstd.get(), eps, {needs[0], affine && needs[1], affine && needs[2]});
    if (!affine) grads.resize(1);
    return grads;
  };
  // The normalization's Jacobian is symmetric, so x̂'s tangent is its backward (without weight) of ẋ;
  // then ẏ = x̂˙·w + x̂·ẇ + ḃ.
  auto tangent = [&](const Tangents& t) {
    const Variable xhat_dot =
        t.has(0) ? layer_norm_backward(t[0], x, Variable(), out.mean, out.rstd, eps, {true, false, false})[0]
                 : Variable();
    if (!affine) return xhat_dot;
    const Variable xhat(layer_norm_forward(x.data(), Tensor(), Tensor(), eps).y);
    return t.sum({t.has(0) ? xhat_dot * weight : Variable(), t.has(1) ? xhat * t[1] : Variable(),
                  t.has(2) ? t[2] : Variable()});
  };
  if (affine) return record("layer_norm", out.y, {x, weight, bias}, backward, tangent);
  return record("layer_norm", out.y, {x}, backward, tangent);
}

}  // namespace minigrad

// Batch normalization: each channel (dimension 1) normalised over the batch and any spatial positions,
// as PyTorch's F.batch_norm.
//
//   training: y = (x - μ_B) / √(σ²_B + eps) · weight + bias, with μ_B and σ²_B (biased) the channel's mean
//             and variance over the batch; the running statistics, when given, move toward them:
//             running = (1 - momentum)·running + momentum·statistic, the variance unbiased (·n/(n-1)).
//   eval:     the same with the running statistics, constants: an affine map of x, composed from
//             differentiable ops.
//
// The training form's forward is one fused kernel, and its backward the batch-statistics derivative. With
// x̂ the normalised input, r = 1/√(σ²_B + eps) and ĝ = g·weight, over the n values of a channel:
//   dx = r·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)),   dweight = Σ g·x̂,   dbias = Σ g
// As layer norm's: a fused kernel (tensor/batch_norm.h) when no graph is recorded, and the same formulas
// written with differentiable ops when one is (create_graph), so that the second derivative comes from
// them.
#include <array>
#include <string>

#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/norm_backward.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

namespace {

// The dimensions a channel's statistics run over: every one but 1, the channels.
Shape reduced_dims(int rank) {
  Shape dims;
  for (int d = 0; d < rank; ++d)
    if (d != 1) dims.push_back(d);
  return dims;
}

// (1, C, 1, ...): a per-channel vector shaped to broadcast against an input of rank `rank`.
Shape channel_shape(int rank, int64_t channels) {
  Shape shape;
  for (int d = 0; d < rank; ++d) shape.push_back(d == 1 ? channels : 1);
  return shape;
}

void check_operands(const Variable& x, const Tensor& running_mean, const Tensor& running_var,
                    const Variable& weight, const Variable& bias) {
  constexpr const char* op = "batch_norm";
  if (!x.defined()) throw ValueError(op, "the input is undefined");
  if (x.rank() < 2) throw ShapeError(op, "expects an input (N, C, ...), got " + x.shape().str());
  const int64_t c = x.shape()[1];
  if (weight.defined() != bias.defined())
    throw ValueError(op, "weight and bias must both be given or both be undefined");
  if (running_mean.defined() != running_var.defined()) {
    throw ValueError(op, "running_mean and running_var must both be given or both be undefined");
  }
  for (const Tensor* t : {&running_mean, &running_var, weight.defined() ? &weight.data() : nullptr,
                          bias.defined() ? &bias.data() : nullptr}) {
    if (t == nullptr || !t->defined()) continue;
    if (t->shape() != Shape{c}) {
      throw ShapeError(op, "the per-channel tensors must be (C) = [" + std::to_string(c) +
                               "] for an input of shape " + x.shape().str() + ", got " + t->shape().str());
    }
    if (t->dtype() != x.dtype())
      throw DTypeError(op, "the per-channel tensors and the input differ in dtype");
  }
}

}  // namespace

VariableGrads batch_norm_backward(const Variable& g, const Variable& x, const Variable& weight,
                                  const Tensor& mean, const Tensor& rstd, double eps,
                                  std::array<bool, 3> needs) {
  const bool affine = weight.defined();
  if (!detail::norm_backward_records(g, x, weight)) {  // the fused kernel
    return detail::as_variables(
        batch_norm_backward(g.data(), x.data(), affine ? weight.data() : Tensor(), mean, rstd, needs));
  }
  // Recorded (create_graph): the same formulas composed from differentiable ops, with x̂ and r recomputed
  // from x so that their dependence on x is in the graph. gradgradcheck holds the two against each other.
  const int rank = x.rank();
  const int64_t c = x.shape()[1];
  const Shape dims = reduced_dims(rank);
  const Variable centered = sub(x, minigrad::mean(x, dims, /*keepdim=*/true));
  const Variable r =
      pow(add(minigrad::mean(mul(centered, centered), dims, true), eps), -0.5);  // (1, C, 1, ...)
  const Variable xhat = mul(centered, r);
  const Variable ghat = affine ? mul(g, reshape(weight, channel_shape(rank, c))) : g;
  VariableGrads grads(3);
  if (needs[0]) {
    grads[0] = mul(r, sub(sub(ghat, minigrad::mean(ghat, dims, true)),
                          mul(xhat, minigrad::mean(mul(ghat, xhat), dims, true))));
  }
  if (needs[1]) grads[1] = sum(mul(g, xhat), dims);  // (C)
  if (needs[2]) grads[2] = sum(g, dims);             // (C)
  return grads;
}

Variable batch_norm(const Variable& x, const Tensor& running_mean, const Tensor& running_var,
                    const Variable& weight, const Variable& bias, const BatchNormFuncOptions& options) {
  check_operands(x, running_mean, running_var, weight, bias);
  if (!(options.eps >= 0)) throw ValueError("batch_norm", "eps must be non-negative");
  const int rank = x.rank();
  const int64_t c = x.shape()[1], n = x.numel() / std::max<int64_t>(c, 1);
  const Shape per_channel = channel_shape(rank, c);
  const bool affine = weight.defined();
  if (!options.training) {
    if (!running_mean.defined()) {
      throw ValueError("batch_norm", "evaluation needs running_mean and running_var (or training = true)");
    }
    // (x - running_mean) / √(running_var + eps) · weight + bias: constants but for x, weight and bias.
    Variable y = mul(sub(x, Variable(running_mean.reshape(per_channel))),
                     Variable(pow(running_var + options.eps, -0.5).reshape(per_channel)));
    if (affine) y = add(mul(y, reshape(weight, per_channel)), reshape(bias, per_channel));
    return y;
  }
  if (n <= 1) {
    throw ValueError("batch_norm", "training needs more than 1 value per channel, got an input of shape " +
                                       x.shape().str());
  }
  const BatchNormForward out = batch_norm_forward(x.data(), affine ? weight.data() : Tensor(),
                                                  affine ? bias.data() : Tensor(), options.eps);
  if (running_mean.defined()) {
    const double m = options.momentum, unbiased = static_cast<double>(n) / static_cast<double>(n - 1);
    running_mean.mul_(1 - m).add_(out.mean, m);
    running_var.mul_(1 - m).add_(out.var, m * unbiased);
  }
  // What the gradients need: x always, the weight for dx, and the mean and rstd per channel.
  const SavedTensor sx(x), sw = affine ? save_if(weight, x.requires_grad()) : SavedTensor();
  const SavedTensor saved_mean(out.mean), saved_rstd(out.rstd);
  auto backward = [sx, sw, saved_mean, saved_rstd, eps = options.eps, affine](
                      const Variable& g, NeedsGrad needs) -> VariableGrads {
    VariableGrads grads =
        batch_norm_backward(g, sx.variable(), sw.defined() ? sw.variable() : Variable(), saved_mean.get(),
                            saved_rstd.get(), eps, {needs[0], affine && needs[1], affine && needs[2]});
    if (!affine) grads.resize(1);
    return grads;
  };
  // The normalization's Jacobian is symmetric, so x̂'s tangent is its backward (without weight) of ẋ;
  // then ẏ = x̂˙·w + x̂·ẇ + ḃ, per channel.
  auto tangent = [&](const Tangents& t) {
    const Variable xhat_dot = t.has(0) ? batch_norm_backward(t[0], x, Variable(), out.mean, out.rstd,
                                                             options.eps, {true, false, false})[0]
                                       : Variable();
    if (!affine) return xhat_dot;
    const Variable xhat(batch_norm_forward(x.data(), Tensor(), Tensor(), options.eps).y);
    return t.sum({t.has(0) ? xhat_dot * reshape(weight, per_channel) : Variable(),
                  t.has(1) ? xhat * reshape(t[1], per_channel) : Variable(),
                  t.has(2) ? reshape(t[2], per_channel) : Variable()});
  };
  if (affine) return record("batch_norm", out.y, {x, weight, bias}, backward, tangent);
  return record("batch_norm", out.y, {x}, backward, tangent);
}

}  // namespace minigrad

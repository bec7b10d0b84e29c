// The losses as differentiable ops: their checks and recorded backwards. The fused kernels and the
// formulas are in tensor/loss.h.
#include "tensor/loss.h"
#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable cross_entropy_backward(const Variable& g, const Variable& logits, const Tensor& lse,
                                const Tensor& targets, const CrossEntropyOptions& options) {
  // dx = (p - q)·w·g with p = softmax(x) and w the row weights. For Σ gg·dx: d/dg = Σ gg·(p - q)·w, and
  // d/dx = softmax_backward(gg·w·g, p), since dx depends on x only through p.
  return record(
      "cross_entropy_backward", cross_entropy_backward(g.data(), logits.data(), lse, targets, options),
      {g, logits},
      [sg = save_if(g, logits.requires_grad()), sx = SavedTensor(logits), st = SavedTensor(targets), options](
          const Variable& gg, NeedsGrad needs) -> VariableGrads {
        const Variable x = sx.variable();
        const auto [q, w] = cross_entropy_targets_and_weights(st.get(), x.shape()[1], x.dtype(), options);
        const Variable p = softmax(x, 1), weight(w);
        return {needs[0] ? sum(mul(mul(gg, sub(p, Variable(q))), weight)) : Variable(),
                needs[1] ? softmax_backward(mul(mul(gg, weight), sg.variable()), p, 1) : Variable()};
      });
}

Variable cross_entropy(const Variable& logits, const Tensor& targets, CrossEntropyOptions options) {
  if (!logits.defined() || !targets.defined()) throw ValueError("cross_entropy", "an operand is undefined");
  if (logits.rank() != 2) {
    throw ShapeError("cross_entropy", "logits must be [N, C], got " + logits.shape().str());
  }
  check_dtype("cross_entropy", "the targets (class indices)", targets, DType::Int64);
  const int64_t n = logits.shape()[0];
  if (targets.shape() != Shape{n}) {
    throw ShapeError("cross_entropy", "targets of shape " + targets.shape().str() +
                                          " do not match logits of shape " + logits.shape().str() +
                                          " (expected [" + std::to_string(n) + "])");
  }
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
    throw ValueError("cross_entropy",
                     "label_smoothing must be in [0, 1], got " + std::to_string(options.label_smoothing));
  }
  const Tensor t = targets.contiguous();
  const auto [loss, lse] = cross_entropy_forward(logits.data(), t, options);
  return record("cross_entropy", loss, {logits},
                [sx = SavedTensor(logits), slse = SavedTensor(lse), st = SavedTensor(t), options](
                    const Variable& g, NeedsGrad) -> VariableGrads {
                  return {cross_entropy_backward(g, sx.variable(), slse.get(), st.get(), options)};
                });
}

Variable binary_cross_entropy_with_logits(const Variable& logits, const Variable& targets) {
  if (!logits.defined() || !targets.defined()) {
    throw ValueError("binary_cross_entropy_with_logits", "an operand is undefined");
  }
  if (logits.shape() != targets.shape()) {
    throw ShapeError("binary_cross_entropy_with_logits", "logits of shape " + logits.shape().str() +
                                                             " and targets of shape " +
                                                             targets.shape().str() + " differ");
  }
  const Tensor per_element = binary_cross_entropy_with_logits(logits.data(), targets.data());
  const double count = static_cast<double>(std::max<int64_t>(1, logits.numel()));
  // dloss/dx needs x and t; dloss/dt needs only x, so t is kept only if x needs its gradient.
  return record("binary_cross_entropy_with_logits", mean(per_element), {logits, targets},
                [sx = SavedTensor(logits), st = save_if(targets, logits.requires_grad()), count](
                    const Variable& g, NeedsGrad needs) -> VariableGrads {
                  const Variable x = sx.variable(), scale = div(g, count);
                  return {needs[0] ? mul(sub(sigmoid(x), st.variable()), scale) : Variable(),
                          needs[1] ? mul(neg(x), scale) : Variable()};
                });
}

}  // namespace minigrad

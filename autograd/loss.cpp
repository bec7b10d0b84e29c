// The losses as differentiable ops. cross_entropy and binary_cross_entropy_with_logits are fused kernels
// (tensor/loss.h, with the formulas) with recorded backwards; the regression losses and nll_loss are
// compositions of differentiable ops.
#include <algorithm>
#include <string>
#include <vector>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/loss.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Variable cross_entropy_backward(const Variable& g, const Variable& logits, const Tensor& row_max,
                                const Tensor& log_total, const Tensor& targets,
                                const CrossEntropyOptions& options) {
  // dx = (p - q)·w·g with p = softmax(x) and w the row weights. For Σ gg·dx: d/dg = Σ gg·(p - q)·w, and
  // d/dx = softmax_backward(gg·w·g, p), since dx depends on x only through p.
  return record(
      "cross_entropy_backward",
      cross_entropy_backward(g.data(), logits.data(), row_max, log_total, targets, options), {g, logits},
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
  const auto [loss, row_max, log_total] = cross_entropy_forward(logits.data(), t, options);
  return record("cross_entropy", loss, {logits},
                [sx = SavedTensor(logits), sm = SavedTensor(row_max), sl = SavedTensor(log_total),
                 st = SavedTensor(t), options](const Variable& g, NeedsGrad) -> VariableGrads {
                  return {cross_entropy_backward(g, sx.variable(), sm.get(), sl.get(), st.get(), options)};
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

// ---- the regression losses and nll_loss: compositions of differentiable ops, so every derivative comes
// from their parts ----

namespace {

Variable reduce(const Variable& per_element, Reduction reduction) {
  switch (reduction) {
    case Reduction::Mean:
      return mean(per_element);
    case Reduction::Sum:
      return sum(per_element);
    case Reduction::None:
      break;
  }
  return per_element;
}

// input - target, once both are checked: defined, one shape.
Variable difference(const char* op, const Variable& input, const Variable& target) {
  if (!input.defined() || !target.defined()) throw ValueError(op, "an operand is undefined");
  if (input.shape() != target.shape()) {
    throw ShapeError(op, "input of shape " + input.shape().str() + " and target of shape " +
                             target.shape().str() + " differ (minigrad does not broadcast a loss's target)");
  }
  return sub(input, target);
}

}  // namespace

Variable mse_loss(const Variable& input, const Variable& target, LossOptions options) {
  const Variable d = difference("mse_loss", input, target);
  return reduce(mul(d, d), options.reduction);
}

Variable l1_loss(const Variable& input, const Variable& target, LossOptions options) {
  return reduce(abs(difference("l1_loss", input, target)), options.reduction);
}

Variable smooth_l1_loss(const Variable& input, const Variable& target, SmoothL1LossOptions options) {
  if (!(options.beta >= 0)) {
    throw ValueError("smooth_l1_loss", "beta must be at least 0, got " + std::to_string(options.beta));
  }
  if (options.beta == 0) return l1_loss(input, target, {.reduction = options.reduction});
  const Variable d = difference("smooth_l1_loss", input, target);
  const Variable magnitude = abs(d);
  // |d| >= beta takes the linear part; a NaN fails the comparison and takes the quadratic one, whose
  // gradient d/beta is NaN there, as PyTorch's. The quadratic part sees 0 where it is not taken, so that an
  // infinite d cannot make 0·inf in its backward.
  const Tensor linear = ge(magnitude.data(), options.beta);
  const Variable small = masked_fill(d, linear, 0.0);
  const Variable per_element =
      where(linear, add(magnitude, -0.5 * options.beta), mul(mul(small, small), 0.5 / options.beta));
  return reduce(per_element, options.reduction);
}

Variable huber_loss(const Variable& input, const Variable& target, HuberLossOptions options) {
  if (!(options.delta > 0)) {
    throw ValueError("huber_loss", "delta must be positive, got " + std::to_string(options.delta));
  }
  // delta·smooth_l1 with beta = delta: 0.5·d² inside, delta·(|d| - 0.5·delta) outside.
  return mul(smooth_l1_loss(input, target, {.reduction = options.reduction, .beta = options.delta}),
             options.delta);
}

Variable nll_loss(const Variable& input, const Tensor& target, NLLLossOptions options) {
  constexpr const char* op = "nll_loss";
  if (!input.defined() || !target.defined()) throw ValueError(op, "an operand is undefined");
  if (input.rank() != 2) throw ShapeError(op, "input must be [N, C], got " + input.shape().str());
  check_dtype(op, "the targets (class indices)", target, DType::Int64);
  const int64_t n = input.shape()[0], classes = input.shape()[1];
  if (target.shape() != Shape{n}) {
    throw ShapeError(op, "targets of shape " + target.shape().str() + " do not match input of shape " +
                             input.shape().str() + " (expected [" + std::to_string(n) + "])");
  }
  // Each row's target, as an index into the input flattened row-major: row·C + target. An ignored row
  // looks up its column 0 and is zeroed below.
  const std::vector<int64_t> ids = target.to_vector<int64_t>();
  std::vector<int64_t> flat_index(static_cast<size_t>(n));
  std::vector<bool> ignored(static_cast<size_t>(n), false);
  int64_t counted = 0;
  for (int64_t row = 0; row < n; ++row) {
    const int64_t t = ids[static_cast<size_t>(row)];
    if (t == options.ignore_index) {
      ignored[static_cast<size_t>(row)] = true;
      flat_index[static_cast<size_t>(row)] = row * classes;
      continue;
    }
    if (t < 0 || t >= classes) {
      throw IndexError(
          op, "target " + std::to_string(t) + " is out of range for " + std::to_string(classes) + " classes");
    }
    flat_index[static_cast<size_t>(row)] = row * classes + t;
    ++counted;
  }
  // input[row, target[row]]: a lookup in the input as a one-column table, O(N) (its backward adds g into
  // the looked-up entries). Zeroing ignored rows with masked_fill keeps a NaN or -inf there out of the loss.
  const Variable picked =
      reshape(embedding(reshape(input, {n * classes, 1}), Tensor::from_vector(flat_index, {n})), {n});
  const Variable per_row = neg(masked_fill(picked, Tensor::from_vector(ignored, {n}), 0.0));  // (N)
  switch (options.reduction) {
    case Reduction::Mean:
      return div(sum(per_row), static_cast<double>(std::max<int64_t>(counted, 1)));
    case Reduction::Sum:
      return sum(per_row);
    case Reduction::None:
      break;
  }
  return per_row;
}

}  // namespace minigrad

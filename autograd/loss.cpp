// The losses as differentiable ops. cross_entropy and binary_cross_entropy_with_logits are fused kernels
// (tensor/loss.h, with the formulas) with recorded backwards; the regression losses and nll_loss are
// compositions of differentiable ops.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/loss.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

namespace {

// A classification loss's other input shapes, as rows of classes: input (C) with a target () is one row;
// (N, C, d1, ...) with targets (N, d1, ...) is a row per position, the classes moved last. `loss` takes
// (M, C) and (M); with Reduction::None its (M) result gets the targets' shape.
template <typename Loss>
Variable over_rows(const char* op, const Variable& input, const Tensor& targets, Reduction reduction,
                   const Loss& loss) {
  const Shape& shape = input.shape();
  if (input.rank() == 0)
    throw ShapeError(op, "input must be (N, C), (C) or (N, C, d1, ...), got " + shape.str());
  Shape expected = shape;  // the targets': the input's less its class dimension
  expected.erase(input.rank() == 1 ? 0 : 1);
  if (targets.shape() != expected) {
    throw ShapeError(op, "targets of shape " + targets.shape().str() + " do not match input of shape " +
                             shape.str() + " (expected " + expected.str() + ")");
  }
  const int64_t classes = input.rank() == 1 ? shape[0] : shape[1];
  int64_t rows = 1;
  for (int64_t d : expected) rows *= d;
  Shape classes_last;  // (N, C, d1, ..., dk) -> (N, d1, ..., dk, C)
  for (int64_t d = 0; d < input.rank(); ++d)
    if (d != 1 || input.rank() == 1) classes_last.push_back(d);
  if (input.rank() > 1) classes_last.push_back(1);
  const Variable out =
      loss(reshape(permute(input, classes_last), {rows, classes}), targets.contiguous().reshape({rows}));
  return reduction == Reduction::None ? reshape(out, expected) : out;
}

// A class weight must be (C) and floating, C the classes of the (N, C) input.
void check_class_weight(const char* op, const Tensor& weight, const Variable& input) {
  const int64_t classes = input.shape()[1];
  if (!weight.defined()) return;
  if (weight.shape() != Shape{classes} || !is_floating(weight.dtype())) {
    throw ShapeError(op, "weight must be a floating (C) tensor for the input's " + std::to_string(classes) +
                             " classes, got " + weight.shape().str() + " " +
                             std::string(dtype_name(weight.dtype())));
  }
}

}  // namespace

Variable cross_entropy_backward(const Variable& g, const Variable& logits, const Tensor& row_max,
                                const Tensor& log_total, const Tensor& targets,
                                const CrossEntropyOptions& options) {
  // dx = (p - q)·f·g with p = softmax(x), f the row factors and g the upstream gradient (a row's own with
  // Reduction::None). For Σ gg·dx: d/dg = Σ gg·(p - q)·f (over each row with Reduction::None), and
  // d/dx = softmax_backward(gg·f·g, p), since dx depends on x only through p.
  return record(
      "cross_entropy_backward",
      cross_entropy_backward(g.data(), logits.data(), row_max, log_total, targets, options), {g, logits},
      [sg = save_if(g, logits.requires_grad()), sx = SavedTensor(logits), st = SavedTensor(targets), options](
          const Variable& gg, NeedsGrad needs) -> VariableGrads {
        const Variable x = sx.variable();
        const auto [q, f] = cross_entropy_targets_and_weights(st.get(), x.shape()[1], x.dtype(), options);
        const Variable p = softmax(x, 1), factor(f);
        const bool per_row = options.reduction == Reduction::None;
        const Variable d = mul(mul(gg, sub(p, Variable(q))), factor);  // (N, C)
        return {needs[0] ? (per_row ? sum(d, {1}) : sum(d)) : Variable(),
                needs[1] ? softmax_backward(
                               mul(mul(gg, factor),
                                   per_row ? reshape(sg.variable(), {x.shape()[0], 1}) : sg.variable()),
                               p, 1)
                         : Variable()};
      },
      [&](const Tangents& t) {  // linear in g; along the logits, f·g·ṗ with ṗ = softmax_backward(ẋ, p)
        const auto [q, f] =
            cross_entropy_targets_and_weights(targets, logits.shape()[1], logits.dtype(), options);
        const Variable rows_g = options.reduction == Reduction::None ? reshape(g, {logits.shape()[0], 1}) : g;
        return t.sum(
            {t.has(0) ? cross_entropy_backward(t[0], logits, row_max, log_total, targets, options)
                      : Variable(),
             t.has(1) ? softmax_backward(t[1], softmax(logits, 1), 1) * Variable(f) * rows_g : Variable()});
      });
}

Variable cross_entropy(const Variable& logits, const Tensor& targets, CrossEntropyOptions options) {
  constexpr const char* op = "cross_entropy";
  if (!logits.defined() || !targets.defined()) throw ValueError(op, "an operand is undefined");
  check_dtype(op, "the targets (class indices)", targets, DType::Int64);
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
    throw ValueError(op, "label_smoothing must be in [0, 1], got " + std::to_string(options.label_smoothing));
  }
  if (logits.rank() != 2) {
    return over_rows(op, logits, targets, options.reduction,
                     [&](const Variable& x, const Tensor& t) { return cross_entropy(x, t, options); });
  }
  const int64_t n = logits.shape()[0];
  if (targets.shape() != Shape{n}) {
    throw ShapeError(op, "targets of shape " + targets.shape().str() + " do not match logits of shape " +
                             logits.shape().str() + " (expected [" + std::to_string(n) + "])");
  }
  check_class_weight(op, options.weight, logits);
  const Tensor target_classes = targets.contiguous();
  const auto [loss, row_max, log_total] = cross_entropy_forward(logits.data(), target_classes, options);
  return record(
      op, loss, {logits},
      [sx = SavedTensor(logits), sm = SavedTensor(row_max), sl = SavedTensor(log_total),
       st = SavedTensor(target_classes), options](const Variable& g, NeedsGrad) -> VariableGrads {
        return {cross_entropy_backward(g, sx.variable(), sm.get(), sl.get(), st.get(), options)};
      },
      [&](const Tangents& t) {  // ⟨d loss / d logits, ẋ⟩, by row with Reduction::None
        const Variable ones(Tensor::ones(t.output().shape(), logits.dtype()));
        const Variable d =
            cross_entropy_backward(ones, logits, row_max, log_total, target_classes, options) * t[0];
        return options.reduction == Reduction::None ? sum(d, {1}) : sum(d);
      });
}

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

// Whether `b` broadcasts to exactly `shape` (as an elementwise weight of a loss must).
bool broadcasts_to(const Shape& b, const Shape& shape) {
  if (b.rank() > shape.rank()) return false;
  for (int i = 1; i <= b.rank(); ++i) {
    const int64_t d = b[b.rank() - i];
    if (d != 1 && d != shape[shape.rank() - i]) return false;
  }
  return true;
}

}  // namespace

namespace {

// Each element's d loss / d logit and d loss / d target, where `needs` asks for them: σ(x) - t and -x;
// with pos_weight p, σ(x) - t + (p - 1)·t·(σ(x) - 1) and -x + (p - 1)·softplus(-x).
std::pair<Variable, Variable> bce_with_logits_slopes(const Variable& x, const Variable& t, const Tensor& p,
                                                     std::array<bool, 2> needs) {
  Variable dx, dt;
  if (!p.defined()) {
    if (needs[0]) dx = sub(sigmoid(x), t);
    if (needs[1]) dt = neg(x);
    return {dx, dt};
  }
  const Variable extra(add(p.to(x.dtype()), -1.0));
  if (needs[0]) dx = add(sub(sigmoid(x), t), mul(mul(extra, t), add(sigmoid(x), -1.0)));
  if (needs[1]) dt = add(neg(x), mul(extra, softplus(neg(x))));
  return {dx, dt};
}

}  // namespace

Variable binary_cross_entropy_with_logits(const Variable& logits, const Variable& targets,
                                          const BCEWithLogitsOptions& options) {
  constexpr const char* op = "binary_cross_entropy_with_logits";
  if (!logits.defined() || !targets.defined()) throw ValueError(op, "an operand is undefined");
  if (logits.shape() != targets.shape()) {
    throw ShapeError(op, "logits of shape " + logits.shape().str() + " and targets of shape " +
                             targets.shape().str() + " differ");
  }
  for (const auto& [name, w] : {std::pair{"weight", &options.weight}, {"pos_weight", &options.pos_weight}}) {
    if (w->defined() && !broadcasts_to(w->shape(), logits.shape())) {
      throw ShapeError(op, std::string(name) + " of shape " + w->shape().str() +
                               " does not broadcast to the logits' shape " + logits.shape().str());
    }
  }
  const Tensor& p = options.pos_weight;
  // Each element's loss; dloss/dx needs x and t, dloss/dt only x, so t is kept only if x needs its gradient.
  const Variable per_element = record(
      op, binary_cross_entropy_with_logits(logits.data(), targets.data(), p), {logits, targets},
      [sx = SavedTensor(logits), st = save_if(targets, logits.requires_grad()), p](
          const Variable& g, NeedsGrad needs) -> VariableGrads {
        const auto [dx, dt] = bce_with_logits_slopes(sx.variable(), st.variable(), p, {needs[0], needs[1]});
        return {needs[0] ? mul(dx, g) : Variable(), needs[1] ? mul(dt, g) : Variable()};
      },
      [&](const Tangents& t) {
        const auto [dx, dt] = bce_with_logits_slopes(logits, targets, p, {t.has(0), t.has(1)});
        return t.sum({t.has(0) ? dx * t[0] : Variable(), t.has(1) ? dt * t[1] : Variable()});
      });
  return reduce(
      options.weight.defined() ? mul(per_element, Variable(options.weight.to(logits.dtype()))) : per_element,
      options.reduction);
}

// ---- the regression losses and nll_loss: compositions of differentiable ops, so every derivative comes
// from their parts ----

namespace {

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
  check_dtype(op, "the targets (class indices)", target, DType::Int64);
  if (input.rank() != 2) {
    return over_rows(op, input, target, options.reduction,
                     [&](const Variable& x, const Tensor& t) { return nll_loss(x, t, options); });
  }
  const int64_t n = input.shape()[0], classes = input.shape()[1];
  if (target.shape() != Shape{n}) {
    throw ShapeError(op, "targets of shape " + target.shape().str() + " do not match input of shape " +
                             input.shape().str() + " (expected [" + std::to_string(n) + "])");
  }
  check_class_weight(op, options.weight, input);
  const std::vector<double> class_weight =
      options.weight.defined() ? options.weight.to(DType::Float64).contiguous().to_vector<double>()
                               : std::vector<double>(static_cast<size_t>(classes), 1.0);
  // Each row's target, as an index into the input flattened row-major: row·C + target. An ignored row
  // looks up its column 0 and is zeroed below.
  const std::vector<int64_t> ids = target.to_vector<int64_t>();
  std::vector<int64_t> flat_index(static_cast<size_t>(n));
  std::vector<bool> ignored(static_cast<size_t>(n), false);
  std::vector<double> row_weight(static_cast<size_t>(n), 0.0);
  double counted_weight = 0;  // the mean's denominator: the counted rows' weights (their count without)
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
    row_weight[static_cast<size_t>(row)] = class_weight[static_cast<size_t>(t)];
    counted_weight += class_weight[static_cast<size_t>(t)];
  }
  // input[row, target[row]]: a lookup in the input as a one-column table, O(N) (its backward adds g into
  // the looked-up entries). Zeroing ignored rows with masked_fill keeps a NaN or -inf there out of the loss.
  const Variable picked =
      reshape(embedding(reshape(input, {n * classes, 1}), Tensor::from_vector(flat_index, {n})), {n});
  Variable per_row = neg(masked_fill(picked, Tensor::from_vector(ignored, {n}), 0.0));  // (N)
  if (options.weight.defined())
    per_row = mul(per_row, Variable(Tensor::from_vector(row_weight, {n}).to(input.dtype())));
  switch (options.reduction) {
    case Reduction::Mean:
      return div(sum(per_row), counted_weight != 0 ? counted_weight : 1.0);
    case Reduction::Sum:
      return sum(per_row);
    case Reduction::None:
      break;
  }
  return per_row;
}

}  // namespace minigrad

// Losses computed straight from logits, fused so that they stay finite and cheap.
//
// Cross-entropy for one row of logits x with target class t:
//   loss = -log softmax(x)_t = logsumexp(x) - x_t,   logsumexp(x) = m + log Σ exp(x_i - m), m = max x
//   dloss/dx_i = softmax(x)_i - [i = t]
// Binary cross-entropy with logits, for logit x and target t in [0, 1]:
//   loss = -t·log σ(x) - (1-t)·log(1 - σ(x)) = max(x, 0) - x·t + log(1 + exp(-|x|))
//   dloss/dx = σ(x) - t,  dloss/dt = -x
#include <cmath>
#include <vector>

#include "autograd/functions.h"
#include "tensor/fast_math.h"
#include "tensor/ops.h"

namespace minigrad {

namespace {

// The rows whose target is not ignored: the mean's count.
int64_t counted_rows(const Tensor& targets, int64_t ignore_index) {
  const int64_t* pt = targets.data_ptr<const int64_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < targets.numel(); ++i) count += pt[i] != ignore_index;
  return count;
}

// The smoothed targets q (on·onehot(t) + off, [N, C]) and each row's weight in the mean (1/count, or 0
// for an ignored row, [N, 1]), as constants for the recorded form of the backward.
std::pair<Tensor, Tensor> targets_and_weights(const Tensor& targets, int64_t c, DType dtype,
                                              const CrossEntropyOptions& options) {
  const int64_t n = targets.numel(), count = counted_rows(targets, options.ignore_index);
  const double off = options.label_smoothing / static_cast<double>(c), on = 1 - options.label_smoothing;
  Tensor q = Tensor::full({n, c}, off, dtype), w = Tensor::zeros({n, 1}, dtype);
  const int64_t* pt = targets.data_ptr<const int64_t>();
  for (int64_t i = 0; i < n && count > 0; ++i) {
    if (pt[i] == options.ignore_index) continue;
    q.select(0, i).select(0, pt[i]).fill_(on + off);
    w.select(0, i).fill_(1.0 / double(count));
  }
  return {q, w};
}

}  // namespace

// dx = (softmax(x) - q)·g/count on counted rows, 0 on ignored ones; softmax(x) = exp(x - lse).
Tensor cross_entropy_backward(const Tensor& g, const Tensor& logits, const Tensor& lse, const Tensor& targets,
                              const CrossEntropyOptions& options) {
  const Tensor x = logits.contiguous();  // [N, C]
  const int64_t n = x.shape()[0], c = x.shape()[1];
  const int64_t count = counted_rows(targets, options.ignore_index);
  const double off = options.label_smoothing / static_cast<double>(c), on = 1 - options.label_smoothing;
  Tensor dx = Tensor::zeros(x.shape(), x.dtype());
  if (count == 0) return dx;
  dispatch_float(x.dtype(), "cross_entropy_backward", [&]<typename T>() {
    const T scale = T(g.item()) / T(count);  // d mean / d loss_i
    const T* px = x.data_ptr<const T>();
    const T* pl = lse.data_ptr<const T>();
    const int64_t* pt = targets.data_ptr<const int64_t>();
    T* pd = dx.data_ptr<T>();
    parallel_for(n, c, [=, ignore = options.ignore_index](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (pt[i] == ignore) continue;  // ignored rows stay zero
        for (int64_t j = 0; j < c; ++j)
          pd[i * c + j] = (fast_exp_nonpositive(px[i * c + j] - pl[i]) - T(off)) * scale;
        pd[i * c + pt[i]] -= T(on) * scale;
      }
    });
  });
  return dx;
}

Variable cross_entropy_backward(const Variable& g, const Variable& logits, const Tensor& lse,
                                const Tensor& targets, const CrossEntropyOptions& options) {
  // dx = (p - q)·w·g with p = softmax(x) and w the row weights. For Σ gg·dx: d/dg = Σ gg·(p - q)·w, and
  // d/dx = softmax_backward(gg·w·g, p), since dx depends on x only through p.
  return record("cross_entropy_backward",
                cross_entropy_backward(g.data(), logits.data(), lse, targets, options), {g, logits},
                [sg = save_if(g, logits.requires_grad()), sx = SavedTensor(logits), st = SavedTensor(targets),
                 options](const Variable& gg, NeedsGrad needs) -> VariableGrads {
                  const Variable x = sx.variable();
                  const auto [q, w] = targets_and_weights(st.get(), x.shape()[1], x.dtype(), options);
                  const Variable p = softmax(x, 1), weight(w);
                  return {
                      needs[0] ? sum(mul(mul(gg, sub(p, Variable(q))), weight)) : Variable(),
                      needs[1] ? softmax_backward(mul(mul(gg, weight), sg.variable()), p, 1) : Variable()};
                });
}

Variable cross_entropy(const Variable& logits, const Tensor& targets, CrossEntropyOptions options) {
  if (!logits.defined() || !targets.defined()) throw ValueError("cross_entropy", "an operand is undefined");
  if (logits.rank() != 2) {
    throw ShapeError("cross_entropy", "logits must be [N, C], got " + logits.shape().str());
  }
  check_dtype("cross_entropy", "the targets (class indices)", targets, DType::Int64);
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  if (targets.shape() != Shape{n}) {
    throw ShapeError("cross_entropy", "targets of shape " + targets.shape().str() +
                                          " do not match logits of shape " + logits.shape().str() +
                                          " (expected [" + std::to_string(n) + "])");
  }
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
    throw ValueError("cross_entropy",
                     "label_smoothing must be in [0, 1], got " + std::to_string(options.label_smoothing));
  }
  // The smoothed target of a row: `on` at its class plus `off` at every class (off = 0 without smoothing).
  const double off = options.label_smoothing / static_cast<double>(c), on = 1 - options.label_smoothing;
  const Tensor t = targets.contiguous();
  const int64_t* pt = t.data_ptr<const int64_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (pt[i] == options.ignore_index) continue;
    if (pt[i] < 0 || pt[i] >= c) {
      throw IndexError("cross_entropy", "target " + std::to_string(pt[i]) + " is out of range for " +
                                            std::to_string(c) + " classes");
    }
    ++count;
  }

  const Tensor x = logits.data().contiguous();       // [N, C]
  const Tensor lse = Tensor::empty({n}, x.dtype());  // logsumexp of each row, kept for backward
  Tensor loss = Tensor::empty({}, x.dtype());
  dispatch_float(x.dtype(), "cross_entropy", [&]<typename T>() {
    const T* px = x.data_ptr<const T>();
    T* pl = lse.data_ptr<T>();
    // Each row's loss on its own (rows in parallel), then summed in order: the same total for any
    // number of threads.
    std::vector<double> row_loss(static_cast<size_t>(n), 0.0);
    parallel_for(n, c, [&, ignore = options.ignore_index](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T* row = px + i * c;
        T m = row[0];
        for (int64_t j = 1; j < c; ++j) m = row[j] > m ? row[j] : m;
        T s = 0, row_sum = 0;
        for (int64_t j = 0; j < c; ++j) {
          s += fast_exp_nonpositive(row[j] - m);
          row_sum += row[j];
        }
        pl[i] = m + std::log(s);
        // -Σ_j q_j·log softmax_j = lse - Σ_j q_j·x_j, since the q_j sum to 1. A class masked out with a
        // logit of -inf takes no part where its weight is 0 (0·-inf would be NaN), as in PyTorch: loss 0
        // for [-inf, 0] with target 1, +inf for [0, -inf] with target 1 or with label smoothing.
        if (pt[i] == ignore) continue;
        const T target_term = on == 0 ? T(0) : T(on) * row[pt[i]];
        const T smoothing_term = off == 0 ? T(0) : T(off) * row_sum;
        row_loss[static_cast<size_t>(i)] = pl[i] - target_term - smoothing_term;
      }
    });
    double total = 0;
    for (double l : row_loss) total += l;
    *loss.data_ptr<T>() = T(count ? total / double(count) : 0.0);
  });

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
  const Tensor per_element =
      zip_float("binary_cross_entropy_with_logits", logits.data(), targets.data(), [](auto x, auto t) {
        using T = decltype(x);
        return (x > 0 ? x : T(0)) - x * t + std::log1p(fast_exp(-std::abs(x)));
      });
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

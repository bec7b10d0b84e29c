#include "minigrad/tensor/loss.h"

#include <cmath>
#include <vector>

#include "minigrad/tensor/elementwise.h"
#include "minigrad/tensor/fast_math.h"
#include "minigrad/tensor/map.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// What the cross-entropy of (N, C) logits needs besides them: each row's target, each class's weight
// (1 without), and the mean's denominator, Σ w_t over the counted rows (their count without weights).
struct Rows {
  const int64_t* target;
  std::vector<double> weight;  // (C)
  bool weighted;
  double counted_weight;
};

Rows rows_of(const Tensor& targets, int64_t c, const CrossEntropyOptions& options) {
  Rows r{targets.data_ptr<const int64_t>(), std::vector<double>(static_cast<size_t>(c), 1.0),
         options.weight.defined(), 0};
  if (r.weighted) r.weight = options.weight.to(DType::Float64).contiguous().to_vector<double>();
  for (int64_t i = 0; i < targets.numel(); ++i) {
    const int64_t t = r.target[i];
    if (t == options.ignore_index) continue;
    if (t < 0 || t >= c) {
      throw IndexError("cross_entropy", "target " + std::to_string(t) + " is out of range for " +
                                            std::to_string(c) + " classes");
    }
    r.counted_weight += r.weight[static_cast<size_t>(t)];
  }
  return r;
}

// A row's A = on·w_t + off·Σ_c w_c (1 without weights, where it is 1 exactly).
double row_total(const Rows& r, int64_t t, double on, double off, double weight_sum) {
  return r.weighted ? on * r.weight[static_cast<size_t>(t)] + off * weight_sum : 1.0;
}

}  // namespace

CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                          const CrossEntropyOptions& options) {
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  // The smoothed target of a row: `on` at its class plus `off` at every class (off = 0 without smoothing).
  const double off = options.label_smoothing / static_cast<double>(c), on = 1 - options.label_smoothing;
  const Tensor t = targets.contiguous();
  const Rows r = rows_of(t, c, options);
  double weight_sum = 0;
  for (double w : r.weight) weight_sum += w;

  const Tensor x = logits.contiguous();  // [N, C]
  // Each row's max and log Σ exp(x - max), kept for the backward.
  const Tensor row_max = Tensor::empty({n}, x.dtype()), log_total = Tensor::empty({n}, x.dtype());
  Tensor loss =
      options.reduction == Reduction::None ? Tensor::zeros({n}, x.dtype()) : Tensor::empty({}, x.dtype());
  dispatch_float(x.dtype(), "cross_entropy", [&]<typename T>() {
    const T* px = x.data_ptr<const T>();
    T* pm = row_max.data_ptr<T>();
    T* pl = log_total.data_ptr<T>();
    // Each row's loss on its own (rows in parallel), then summed in order: the same total for any
    // number of threads.
    std::vector<double> row_loss(static_cast<size_t>(n), 0.0);
    parallel_for(n, c, [&, ignore = options.ignore_index](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T* row = px + i * c;
        T m = row[0];
        for (int64_t j = 1; j < c; ++j) m = row[j] > m ? row[j] : m;
        T s = 0, shifted_sum = 0;  // Σ exp(z), and Σ w·z (Σ z without weights)
        for (int64_t j = 0; j < c; ++j) {
          s += fast_exp_nonpositive(row[j] - m);
          shifted_sum += r.weighted ? T(r.weight[static_cast<size_t>(j)]) * (row[j] - m) : row[j] - m;
        }
        pm[i] = m;
        pl[i] = std::log(s);
        // A·L - on·w_t·z_t - off·Σ w·z. A class masked out with a logit of -inf takes no part where its
        // weight is 0 (0·-inf would be NaN), as in PyTorch: loss 0 for [-inf, 0] with target 1, +inf for
        // [0, -inf] with target 1 or with label smoothing.
        const int64_t target = r.target[i];
        if (target == ignore) continue;
        const double w_t = r.weight[static_cast<size_t>(target)];
        const T target_term = on == 0 ? T(0) : T(on * w_t) * (row[target] - m);
        const T smoothing_term = off == 0 ? T(0) : T(off) * shifted_sum;
        row_loss[static_cast<size_t>(i)] =
            T(row_total(r, target, on, off, weight_sum)) * pl[i] - target_term - smoothing_term;
      }
    });
    if (options.reduction == Reduction::None) {
      T* out = loss.data_ptr<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = T(row_loss[static_cast<size_t>(i)]);
      return;
    }
    double total = 0;
    for (double l : row_loss) total += l;
    const double denominator = options.reduction == Reduction::Mean ? r.counted_weight : 1.0;
    *loss.data_ptr<T>() = T(denominator != 0 ? total / denominator : 0.0);
  });

  return {loss, row_max, log_total};
}

// dx = (A·softmax(x) - a)·r on counted rows, 0 on ignored ones; softmax(x) = exp((x - m) - L).
Tensor cross_entropy_backward(const Tensor& g, const Tensor& logits, const Tensor& row_max,
                              const Tensor& log_total, const Tensor& targets,
                              const CrossEntropyOptions& options) {
  const Tensor x = logits.contiguous();  // [N, C]
  const int64_t n = x.shape()[0], c = x.shape()[1];
  const Rows r = rows_of(targets.contiguous(), c, options);
  double weight_sum = 0;
  for (double w : r.weight) weight_sum += w;
  const double off = options.label_smoothing / static_cast<double>(c), on = 1 - options.label_smoothing;
  const bool mean = options.reduction == Reduction::Mean, per_row = options.reduction == Reduction::None;
  Tensor dx = Tensor::zeros(x.shape(), x.dtype());
  if (mean && r.counted_weight == 0) return dx;
  const Tensor upstream = g.to(DType::Float64).contiguous();  // () or, per row, (N)
  dispatch_float(x.dtype(), "cross_entropy_backward", [&]<typename T>() {
    const double* pg = upstream.data_ptr<const double>();
    const T* px = x.data_ptr<const T>();
    const T* pm = row_max.data_ptr<const T>();
    const T* pl = log_total.data_ptr<const T>();
    T* pd = dx.data_ptr<T>();
    parallel_for(n, c, [&, ignore = options.ignore_index](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t target = r.target[i];
        if (target == ignore) continue;  // ignored rows stay zero
        // d result / d loss_i
        const T scale = mean ? T(pg[0]) / T(r.counted_weight) : T(per_row ? pg[i] : pg[0]);
        const T total = T(row_total(r, target, on, off, weight_sum));
        for (int64_t j = 0; j < c; ++j) {
          const T softmax = fast_exp_nonpositive((px[i * c + j] - pm[i]) - pl[i]);
          pd[i * c + j] = (total * softmax - T(off * r.weight[static_cast<size_t>(j)])) * scale;
        }
        pd[i * c + target] -= T(on * r.weight[static_cast<size_t>(target)]) * scale;
      }
    });
  });
  return dx;
}

std::pair<Tensor, Tensor> cross_entropy_targets_and_weights(const Tensor& targets, int64_t c, DType dtype,
                                                            const CrossEntropyOptions& options) {
  const int64_t n = targets.numel();
  const Rows r = rows_of(targets.contiguous(), c, options);
  double weight_sum = 0;
  for (double w : r.weight) weight_sum += w;
  const double off = options.label_smoothing / static_cast<double>(c), on = 1 - options.label_smoothing;
  const double denominator = options.reduction == Reduction::Mean ? r.counted_weight : 1.0;
  Tensor q = Tensor::zeros({n, c}, dtype), f = Tensor::zeros({n, 1}, dtype);
  if (denominator == 0) return {q, f};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = r.target[i];
    if (t == options.ignore_index) continue;
    const double total = row_total(r, t, on, off, weight_sum);
    if (total == 0) continue;  // a row of weight 0: no gradient
    for (int64_t j = 0; j < c; ++j)
      q.select(0, i).select(0, j).fill_(
          ((j == t ? on * r.weight[static_cast<size_t>(t)] : 0) + off * r.weight[static_cast<size_t>(j)]) /
          total);
    f.select(0, i).fill_(total / denominator);
  }
  return {q, f};
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets,
                                        const Tensor& pos_weight) {
  const Tensor loss = zip_float("binary_cross_entropy_with_logits", logits, targets, [](auto x, auto t) {
    using T = decltype(x);
    // PyTorch's arrangement, (1 - t)·x + max(-x, 0) + log(1 + e^-|x|): the same value as
    // max(x, 0) - x·t + log(1 + e^-|x|), but inf rather than inf - inf·0 = NaN at x = +inf with t = 0.
    return (1 - t) * x + (x < 0 ? -x : T(0)) + std::log1p(fast_exp(-std::abs(x)));
  });
  if (!pos_weight.defined()) return loss;
  // + (p - 1)·t·softplus(-x)
  const Tensor softplus_of_minus_x = map_float("binary_cross_entropy_with_logits", logits, [](auto x) {
    using T = decltype(x);
    return (x < 0 ? -x : T(0)) + std::log1p(fast_exp(-std::abs(x)));
  });
  return add(loss, mul(mul(add(pos_weight.to(logits.dtype()), -1.0), targets), softplus_of_minus_x));
}

}  // namespace minigrad

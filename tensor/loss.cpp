#include "minigrad/tensor/loss.h"

#include <cmath>
#include <vector>

#include "minigrad/tensor/fast_math.h"
#include "minigrad/tensor/map.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// The rows whose target is not ignored: the mean's count.
int64_t counted_rows(const Tensor& targets, int64_t ignore_index) {
  const int64_t* pt = targets.data_ptr<const int64_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < targets.numel(); ++i) count += pt[i] != ignore_index;
  return count;
}

}  // namespace

CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                          const CrossEntropyOptions& options) {
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
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

  const Tensor x = logits.contiguous();  // [N, C]
  // Each row's max and log Σ exp(x - max), kept for the backward.
  const Tensor row_max = Tensor::empty({n}, x.dtype()), log_total = Tensor::empty({n}, x.dtype());
  Tensor loss = Tensor::empty({}, x.dtype());
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
        T s = 0, shifted_sum = 0;
        for (int64_t j = 0; j < c; ++j) {
          s += fast_exp_nonpositive(row[j] - m);
          shifted_sum += row[j] - m;
        }
        pm[i] = m;
        pl[i] = std::log(s);
        // -Σ_j q_j·log softmax_j = log s - Σ_j q_j·(x_j - m), since the q_j sum to 1. A class masked out
        // with a logit of -inf takes no part where its weight is 0 (0·-inf would be NaN), as in PyTorch:
        // loss 0 for [-inf, 0] with target 1, +inf for [0, -inf] with target 1 or with label smoothing.
        if (pt[i] == ignore) continue;
        const T target_term = on == 0 ? T(0) : T(on) * (row[pt[i]] - m);
        const T smoothing_term = off == 0 ? T(0) : T(off) * shifted_sum;
        row_loss[static_cast<size_t>(i)] = pl[i] - target_term - smoothing_term;
      }
    });
    double total = 0;
    for (double l : row_loss) total += l;
    *loss.data_ptr<T>() = T(count ? total / double(count) : 0.0);
  });

  return {loss, row_max, log_total};
}

// dx = (softmax(x) - q)·g/count on counted rows, 0 on ignored ones; softmax(x) = exp((x - m) - log s).
Tensor cross_entropy_backward(const Tensor& g, const Tensor& logits, const Tensor& row_max,
                              const Tensor& log_total, const Tensor& targets,
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
    const T* pm = row_max.data_ptr<const T>();
    const T* pl = log_total.data_ptr<const T>();
    const int64_t* pt = targets.data_ptr<const int64_t>();
    T* pd = dx.data_ptr<T>();
    parallel_for(n, c, [=, ignore = options.ignore_index](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (pt[i] == ignore) continue;  // ignored rows stay zero
        for (int64_t j = 0; j < c; ++j)
          pd[i * c + j] = (fast_exp_nonpositive((px[i * c + j] - pm[i]) - pl[i]) - T(off)) * scale;
        pd[i * c + pt[i]] -= T(on) * scale;
      }
    });
  });
  return dx;
}

std::pair<Tensor, Tensor> cross_entropy_targets_and_weights(const Tensor& targets, int64_t c, DType dtype,
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

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& targets) {
  return zip_float("binary_cross_entropy_with_logits", logits, targets, [](auto x, auto t) {
    using T = decltype(x);
    // PyTorch's arrangement, (1 - t)·x + max(-x, 0) + log(1 + e^-|x|): the same value as
    // max(x, 0) - x·t + log(1 + e^-|x|), but inf rather than inf - inf·0 = NaN at x = +inf with t = 0.
    return (1 - t) * x + (x < 0 ? -x : T(0)) + std::log1p(fast_exp(-std::abs(x)));
  });
}

}  // namespace minigrad

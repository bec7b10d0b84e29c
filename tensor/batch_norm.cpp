#include "minigrad/tensor/batch_norm.h"

#include <cmath>

#include "minigrad/tensor/map.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// x as (N, C, S): channel c's values are N runs of S, `C·S` apart.
struct ChannelLayout {
  int64_t n, c, s;
  explicit ChannelLayout(const Shape& shape)
      : n(shape[0]), c(shape[1]), s(n * c == 0 ? 0 : shape.numel() / (n * c)) {}
  int64_t count() const { return n * s; }
};

// Calls visit(run, length) for each of channel ch's runs: `run` is the offset of its first value.
template <typename Visit>
void for_each_run(const ChannelLayout& l, int64_t ch, Visit visit) {
  for (int64_t b = 0; b < l.n; ++b) visit((b * l.c + ch) * l.s, l.s);
}

template <typename T>
void batch_norm_channels(const T* x, const T* w, const T* b, T* y, T* mean_out, T* var_out, T* rstd_out,
                         const ChannelLayout& l, double eps) {
  parallel_for(l.c, 3 * l.count(), [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      // A run's sum in T, the runs' in double: a channel may hold millions of values.
      double total = 0;
      for_each_run(l, ch, [&](int64_t at, int64_t len) {
        const T* xr = x + at;  // a local pointer: one captured by reference keeps the loop scalar
        T run = 0;
#pragma omp simd reduction(+ : run)
        for (int64_t i = 0; i < len; ++i) run += xr[i];
        total += run;
      });
      const double mean = total / static_cast<double>(l.count());
      const T m = static_cast<T>(mean);
      double squares = 0;
      for_each_run(l, ch, [&](int64_t at, int64_t len) {
        const T* xr = x + at;
        T run = 0;
#pragma omp simd reduction(+ : run)
        for (int64_t i = 0; i < len; ++i) run += (xr[i] - m) * (xr[i] - m);
        squares += run;
      });
      const double var = squares / static_cast<double>(l.count());
      const double rstd = 1 / std::sqrt(var + eps);
      // y = x·scale + shift, scale = rstd·w, shift = b - mean·rstd·w
      const T scale = static_cast<T>(w ? rstd * w[ch] : rstd);
      const T shift = static_cast<T>(w ? b[ch] - mean * rstd * w[ch] : -mean * rstd);
      for_each_run(l, ch, [&](int64_t at, int64_t len) {
        const T* xr = x + at;
        T* yr = y + at;
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) yr[i] = xr[i] * scale + shift;
      });
      mean_out[ch] = static_cast<T>(mean);
      var_out[ch] = static_cast<T>(var);
      rstd_out[ch] = static_cast<T>(rstd);
    }
  });
}

template <typename T>
void batch_norm_backward_channels(const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx,
                                  T* dw, T* db, const ChannelLayout& l) {
  parallel_for(l.c, 3 * l.count(), [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      // Σg and Σg·x̂ over the channel
      const T m = mean[ch];
      double sum_g = 0, sum_gx = 0;
      for_each_run(l, ch, [&](int64_t at, int64_t len) {
        const T *gr = g + at, *xr = x + at;
        T run_g = 0, run_gx = 0;
#pragma omp simd reduction(+ : run_g, run_gx)
        for (int64_t i = 0; i < len; ++i) {
          run_g += gr[i];
          run_gx += gr[i] * (xr[i] - m);
        }
        sum_g += run_g;
        sum_gx += run_gx;
      });
      sum_gx *= rstd[ch];
      const double weight = w ? w[ch] : 1.0;
      if (dw) dw[ch] = static_cast<T>(sum_gx);
      if (db) db[ch] = static_cast<T>(sum_g);
      if (!dx) continue;
      // dx = rstd·w·(g - mean(g) - x̂·mean(g·x̂)) = g·a + (x - mean)·k + c
      const double count = static_cast<double>(l.count()), r = rstd[ch];
      const T a = static_cast<T>(r * weight);
      const T k = static_cast<T>(-r * weight * r * sum_gx / count);
      const T c = static_cast<T>(-r * weight * sum_g / count);
      for_each_run(l, ch, [&](int64_t at, int64_t len) {
        const T *gr = g + at, *xr = x + at;
        T* dxr = dx + at;
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) dxr[i] = gr[i] * a + (xr[i] - m) * k + c;
      });
    }
  });
}

}  // namespace

BatchNormForward batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  const bool affine = weight.defined();
  const ChannelLayout layout(x.shape());
  const Tensor xc = x.contiguous();
  const Tensor w = affine ? weight.contiguous() : Tensor();
  const Tensor b = affine ? bias.contiguous() : Tensor();
  BatchNormForward out{.y = Tensor::empty(x.shape(), x.dtype()),
                       .mean = Tensor::empty({layout.c}, x.dtype()),
                       .var = Tensor::empty({layout.c}, x.dtype()),
                       .rstd = Tensor::empty({layout.c}, x.dtype())};
  dispatch_float(x.dtype(), "batch_norm", [&]<typename T>() {
    batch_norm_channels(xc.data_ptr<const T>(), affine ? w.data_ptr<const T>() : nullptr,
                        affine ? b.data_ptr<const T>() : nullptr, out.y.data_ptr<T>(), out.mean.data_ptr<T>(),
                        out.var.data_ptr<T>(), out.rstd.data_ptr<T>(), layout, eps);
  });
  return out;
}

NormGradients batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                  const Tensor& rstd, std::array<bool, 3> needs) {
  const Tensor gc = g.contiguous(), xc = x.contiguous();
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const ChannelLayout layout(x.shape());
  NormGradients grads;
  if (needs[0]) grads.input = Tensor::empty(x.shape(), x.dtype());
  if (needs[1]) grads.weight = Tensor::empty({layout.c}, x.dtype());
  if (needs[2]) grads.bias = Tensor::empty({layout.c}, x.dtype());
  dispatch_float(x.dtype(), "batch_norm_backward", [&]<typename T>() {
    auto out = [](const Tensor& t) { return t.defined() ? t.data_ptr<T>() : nullptr; };
    batch_norm_backward_channels(gc.data_ptr<const T>(), xc.data_ptr<const T>(),
                                 w.defined() ? w.data_ptr<const T>() : nullptr, mean.data_ptr<const T>(),
                                 rstd.data_ptr<const T>(), out(grads.input), out(grads.weight),
                                 out(grads.bias), layout);
  });
  return grads;
}

}  // namespace minigrad

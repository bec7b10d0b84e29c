#include "minigrad/tensor/layer_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "minigrad/tensor/column_sums.h"
#include "minigrad/tensor/map.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

template <typename T>
void layer_norm_rows(const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out, int64_t rows,
                     int64_t d, double eps) {
  parallel_for(rows, d, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * d;  // (D)
      T* yr = y + r * d;
      T total = 0;
#pragma omp simd reduction(+ : total)
      for (int64_t i = 0; i < d; ++i) total += xr[i];
      const T mean = total / T(d);
      T squares = 0;
#pragma omp simd reduction(+ : squares)
      for (int64_t i = 0; i < d; ++i) squares += (xr[i] - mean) * (xr[i] - mean);
      const T rstd = T(1) / std::sqrt(squares / T(d) + T(eps));
      if (w) {
        for (int64_t i = 0; i < d; ++i) yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
      } else {
        for (int64_t i = 0; i < d; ++i) yr[i] = (xr[i] - mean) * rstd;
      }
      mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
  });
}

template <typename T>
void layer_norm_backward_rows(const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx, T* dw,
                              T* db, int64_t rows, int64_t d) {
  if (dx) {
    parallel_for(rows, d, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* gr = g + r * d;
        const T* xr = x + r * d;
        T* dxr = dx + r * d;
        const T mu = mean[r], rs = rstd[r];
        // mean(ĝ) and mean(ĝ·x̂) over the row (sums in any order, as the forward's: vectorized)
        T mean_g = 0, mean_gx = 0;
#pragma omp simd reduction(+ : mean_g, mean_gx)
        for (int64_t i = 0; i < d; ++i) {
          const T xhat = (xr[i] - mu) * rs;
          const T ghat = w ? gr[i] * w[i] : gr[i];
          mean_g += ghat;
          mean_gx += ghat * xhat;
        }
        mean_g /= T(d);
        mean_gx /= T(d);
#pragma omp simd
        for (int64_t i = 0; i < d; ++i) {
          const T xhat = (xr[i] - mu) * rs;
          const T ghat = w ? gr[i] * w[i] : gr[i];
          dxr[i] = rs * (ghat - mean_g - xhat * mean_gx);
        }
      }
    });
  }
  if (dw || db) {
    // Column sums over all rows, in blocks of rows (tensor/column_sums.h), whatever the row's length: with
    // at least 64 rows a block, the blocks' sums stay small beside the input.
    const int64_t block = detail::rows_per_sum_block(d);
    const int64_t blocks = (rows + block - 1) / block;
    detail::BlockSums sums_w(blocks, d), sums_b(blocks, d);
    parallel_for(blocks, std::min(block, rows) * d, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        double* sum_w = sums_w.block(k);
        double* sum_b = sums_b.block(k);
        for (int64_t r = k * block; r < std::min(rows, (k + 1) * block); ++r) {
          const T* gr = g + r * d;
          const T* xr = x + r * d;
          const T mu = mean[r], rs = rstd[r];
#pragma omp simd
          for (int64_t i = 0; i < d; ++i) {
            sum_w[i] += gr[i] * (xr[i] - mu) * rs;
            sum_b[i] += gr[i];
          }
        }
      }
    });
    if (dw) detail::add_block_sums(sums_w, dw, 1, blocks, d);
    if (db) detail::add_block_sums(sums_b, db, 1, blocks, d);
  }
}

}  // namespace

LayerNormForward layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  const bool affine = weight.defined();
  const int64_t d = x.shape().back();
  const Tensor xc = x.contiguous();  // [rows, D]
  const Tensor w = affine ? weight.contiguous() : Tensor();
  const Tensor b = affine ? bias.contiguous() : Tensor();
  const int64_t rows = d == 0 ? 0 : xc.numel() / d;
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  Tensor mean = Tensor::empty({rows}, x.dtype()), rstd = Tensor::empty({rows}, x.dtype());
  dispatch_float(x.dtype(), "layer_norm", [&]<typename T>() {
    layer_norm_rows(xc.data_ptr<const T>(), affine ? w.data_ptr<const T>() : nullptr,
                    affine ? b.data_ptr<const T>() : nullptr, y.data_ptr<T>(), mean.data_ptr<T>(),
                    rstd.data_ptr<T>(), rows, d, eps);
  });

  return {y, mean, rstd};
}

NormGradients layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                  const Tensor& rstd, std::array<bool, 3> needs) {
  const Tensor gc = g.contiguous(), xc = x.contiguous();  // [rows, D]
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const int64_t d = xc.shape().back(), rows = d == 0 ? 0 : xc.numel() / d;
  NormGradients grads;
  if (needs[0]) grads.input = Tensor::empty(xc.shape(), xc.dtype());
  if (needs[1]) grads.weight = Tensor::empty({d}, xc.dtype());
  if (needs[2]) grads.bias = Tensor::empty({d}, xc.dtype());
  dispatch_float(xc.dtype(), "layer_norm_backward", [&]<typename T>() {
    auto out = [](const Tensor& t) { return t.defined() ? t.data_ptr<T>() : nullptr; };
    layer_norm_backward_rows(gc.data_ptr<const T>(), xc.data_ptr<const T>(),
                             w.defined() ? w.data_ptr<const T>() : nullptr, mean.data_ptr<const T>(),
                             rstd.data_ptr<const T>(), out(grads.input), out(grads.weight), out(grads.bias),
                             rows, d);
  });
  return grads;
}

}  // namespace minigrad

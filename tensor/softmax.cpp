#include "minigrad/tensor/softmax.h"

#include <cmath>
#include <limits>

#include "minigrad/tensor/fast_math.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// One row of n values, `stride` apart (1 when softmax runs along the last dimension).
template <typename T, bool kLog>
void softmax_row(const T* x, T* y, int64_t n, int64_t stride) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  T m = kNegInf;
  if (stride == 1) {
#pragma omp simd reduction(max : m)
    for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  } else {
    for (int64_t i = 0; i < n; ++i) m = x[i * stride] > m ? x[i * stride] : m;
  }
  if (m == kNegInf) {
    // No value above -inf: the row is fully masked (see softmax.h), or holds NaNs, which the max skips
    // (NaN > m is false). A NaN must come out as NaN: zeros would hide a model whose weights went bad.
    bool has_nan = false;
    for (int64_t i = 0; i < n; ++i) has_nan |= std::isnan(x[i * stride]);
    const T fill = has_nan ? std::numeric_limits<T>::quiet_NaN() : (kLog ? kNegInf : T(0));
    for (int64_t i = 0; i < n; ++i) y[i * stride] = fill;
    return;
  }
  // A NaN elsewhere in the row makes its exp, the total, and so every output NaN.
  T total = 0;
  if (stride == 1) {
    // softmax keeps exp(x - m) in y for the final scaling; log-softmax only needs the sum.
#pragma omp simd reduction(+ : total)
    for (int64_t i = 0; i < n; ++i) {
      const T e = fast_exp_nonpositive(x[i] - m);
      if constexpr (!kLog) y[i] = e;
      total += e;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const T e = fast_exp_nonpositive(x[i * stride] - m);
      if constexpr (!kLog) y[i * stride] = e;
      total += e;
    }
  }
  if constexpr (kLog) {
    // log softmax(x) = (x - m) - log Σ exp(x - m), in that order: m + log Σ first would round the log Σ
    // away when the row shares a large offset (x - (1e30 + log 2) is 0 at x = 1e30, not -log 2).
    const T log_total = std::log(total);
    for (int64_t i = 0; i < n; ++i) y[i * stride] = (x[i * stride] - m) - log_total;
  } else {
    const T scale = T(1) / total;
    for (int64_t i = 0; i < n; ++i) y[i * stride] *= scale;
  }
}

}  // namespace

void softmax_row_in_place(float* row, int64_t n) {
  softmax_row<float, false>(row, row, n, 1);
}
void softmax_row_in_place(double* row, int64_t n) {
  softmax_row<double, false>(row, row, n, 1);
}

namespace {

template <bool kLog>
Tensor softmax_impl(std::string_view op, const Tensor& x, int64_t dim) {
  if (!x.defined()) throw ValueError(op, "the tensor is undefined");
  const int d = normalize_dim(op, dim, x.rank());
  const Tensor c = x.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  // [outer, n, inner]: each (outer, inner) pair is one row of n values, inner apart.
  const auto [outer, n, inner] = split_around(x.shape(), d);
  dispatch_float(x.dtype(), op, [&]<typename T>() {
    const T* px = c.data_ptr<const T>();
    T* py = out.data_ptr<T>();
    parallel_for(outer * inner, n, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t start = (row / inner) * n * inner + row % inner;
        softmax_row<T, kLog>(px + start, py + start, n, inner);
      }
    });
  });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return softmax_impl<false>("softmax", x, dim);
}
Tensor log_softmax(const Tensor& x, int64_t dim) {
  return softmax_impl<true>("log_softmax", x, dim);
}

namespace {

// out = row_fn(y, g) applied to each row along `dim`. The row dimension is moved last (a copy only when
// it is not last already) so that the kernel sees contiguous rows.
template <typename RowFn>
Tensor rowwise(std::string_view op, const Tensor& y, const Tensor& g, int dim, RowFn row_fn) {
  const Tensor yr = y.transpose(dim, -1).contiguous();
  const Tensor gr = g.transpose(dim, -1).contiguous();
  Tensor out = Tensor::empty(yr.shape(), y.dtype());
  const int64_t n = yr.shape().back(), rows = n == 0 ? 0 : yr.numel() / n;
  dispatch_float(y.dtype(), op, [&]<typename T>() {
    const T* py = yr.data_ptr<const T>();
    const T* pg = gr.data_ptr<const T>();
    T* po = out.data_ptr<T>();
    parallel_for(rows, n, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) row_fn(py + r * n, pg + r * n, po + r * n, n);
    });
  });
  return out.transpose(dim, -1);
}

}  // namespace

Tensor softmax_backward(const Tensor& g, const Tensor& y, int64_t dim) {
  return rowwise("softmax_backward", y, g, normalize_dim("softmax_backward", dim, y.rank()),
                 []<typename T>(const T* y, const T* g, T* dx, int64_t n) {
                   T dot = 0;
                   for (int64_t i = 0; i < n; ++i) dot += g[i] * y[i];
                   for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * (g[i] - dot);
                 });
}

Tensor log_softmax_backward(const Tensor& g, const Tensor& z, int64_t dim) {
  return rowwise("log_softmax_backward", z, g, normalize_dim("log_softmax_backward", dim, z.rank()),
                 []<typename T>(const T* z, const T* g, T* dx, int64_t n) {
                   T total = 0;
                   for (int64_t i = 0; i < n; ++i) total += g[i];
                   for (int64_t i = 0; i < n; ++i) dx[i] = g[i] - fast_exp_nonpositive(z[i]) * total;
                 });
}

}  // namespace minigrad

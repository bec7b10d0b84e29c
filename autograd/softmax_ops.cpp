// Softmax, log-softmax and masking.
//
// With y = softmax(x) along a row, dy_i/dx_j = y_i(δ_ij - y_j), so for upstream gradient g:
//   dx_j = Σ_i g_i·y_i(δ_ij - y_j) = y_j·(g_j - Σ_i g_i·y_i)
// and with z = log_softmax(x), dz_i/dx_j = δ_ij - softmax_j, so
//   dx_j = g_j - softmax_j·Σ_i g_i = g_j - exp(z_j)·Σ_i g_i.
// Both are one dot product per row and one pass; each runs as a fused loop over rows.
#include "autograd/functions.h"
#include "tensor/fast_math.h"
#include "tensor/ops.h"

namespace minigrad {

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

Variable softmax(const Variable& x, int64_t dim) {
  const int d = normalize_dim("softmax", dim, x.rank());
  Tensor y = softmax(x.data(), d);
  return record("softmax", y, {x},
                Backward{[sy = SavedTensor(y), d](const Tensor& g, NeedsGrad) -> Grads {
                           return {rowwise("softmax_backward", sy.get(), g, d,
                                           []<typename T>(const T* y, const T* g, T* dx, int64_t n) {
                                             T dot = 0;
                                             for (int64_t i = 0; i < n; ++i) dot += g[i] * y[i];
                                             for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * (g[i] - dot);
                                           })};
                         },
                         // The same formula in differentiable ops: dx = y·(g - Σ g·y).
                         [sy = SavedTensor(y), d](const Variable& g, NeedsGrad needs) -> VariableGrads {
                           const Variable y = sy.output_variable(needs);
                           return {mul(y, sub(g, sum(mul(g, y), {d}, /*keepdim=*/true)))};
                         }});
}

Variable log_softmax(const Variable& x, int64_t dim) {
  const int d = normalize_dim("log_softmax", dim, x.rank());
  Tensor z = log_softmax(x.data(), d);
  return record("log_softmax", z, {x},
                Backward{[sz = SavedTensor(z), d](const Tensor& g, NeedsGrad) -> Grads {
                           return {rowwise("log_softmax_backward", sz.get(), g, d,
                                           []<typename T>(const T* z, const T* g, T* dx, int64_t n) {
                                             T total = 0;
                                             for (int64_t i = 0; i < n; ++i) total += g[i];
                                             for (int64_t i = 0; i < n; ++i)
                                               dx[i] = g[i] - fast_exp_nonpositive(z[i]) * total;
                                           })};
                         },
                         // dx = g - exp(z)·Σg
                         [sz = SavedTensor(z), d](const Variable& g, NeedsGrad needs) -> VariableGrads {
                           const Variable z = sz.output_variable(needs);
                           return {sub(g, mul(exp(z), sum(g, {d}, /*keepdim=*/true)))};
                         }});
}

Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  // Filled entries no longer depend on x: their gradient is 0.
  return record("masked_fill", masked_fill(x.data(), mask, value), {x},
                [sm = SavedTensor(mask)]<typename G>(const G& g, NeedsGrad) {
                  return GradsOf<G>{masked_fill(g, sm.get(), 0.0)};
                });
}

}  // namespace minigrad

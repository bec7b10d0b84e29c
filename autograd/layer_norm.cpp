// Layer normalization over the last dimension, with a fused forward and backward.
//
// Forward, per row of D values:
//   mean = Σx/D,  var = Σ(x - mean)²/D  (two passes: E[x²] - E[x]² cancels badly in float32)
//   rstd = 1/√(var + eps),  x̂ = (x - mean)·rstd,  y = x̂·w + b
// The forward keeps mean and rstd per row: exactly what the backward needs.
//
// Backward, with ĝ = g·w (the gradient reaching x̂):
//   dx = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂))
// because x̂ depends on every x of its row through mean and rstd: d mean/dx_j = 1/D and
// d rstd/dx_j = -rstd³·(x_j - mean)/D, which collect into the two subtracted means.
//   dw = Σ_rows g·x̂,  db = Σ_rows g
#include <array>
#include <cmath>
#include <vector>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

namespace {

template <typename T>
void layer_norm_forward(const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out, int64_t rows,
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
        // mean(ĝ) and mean(ĝ·x̂) over the row
        T mean_g = 0, mean_gx = 0;
        for (int64_t i = 0; i < d; ++i) {
          const T xhat = (xr[i] - mean[r]) * rstd[r];
          const T ghat = w ? gr[i] * w[i] : gr[i];
          mean_g += ghat;
          mean_gx += ghat * xhat;
        }
        mean_g /= T(d);
        mean_gx /= T(d);
        for (int64_t i = 0; i < d; ++i) {
          const T xhat = (xr[i] - mean[r]) * rstd[r];
          const T ghat = w ? gr[i] * w[i] : gr[i];
          dxr[i] = rstd[r] * (ghat - mean_g - xhat * mean_gx);
        }
      }
    });
  }
  if (dw || db) {
    // Column sums over all rows; threads take disjoint columns, so no two write the same sum.
    parallel_for(d, rows, [&](int64_t begin, int64_t end) {
      std::vector<double> sum_w(end - begin, 0.0), sum_b(end - begin, 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const T* gr = g + r * d;
        const T* xr = x + r * d;
        for (int64_t i = begin; i < end; ++i) {
          sum_w[i - begin] += gr[i] * (xr[i] - mean[r]) * rstd[r];
          sum_b[i - begin] += gr[i];
        }
      }
      for (int64_t i = begin; i < end; ++i) {
        if (dw) dw[i] = T(sum_w[i - begin]);
        if (db) db[i] = T(sum_b[i - begin]);
      }
    });
  }
}

}  // namespace

LayerNormGradients layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& weight,
                                       const Tensor& mean, const Tensor& rstd, std::array<bool, 3> needs) {
  const Tensor gc = g.contiguous(), xc = x.contiguous();  // [rows, D]
  const Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const int64_t d = xc.shape().back(), rows = d == 0 ? 0 : xc.numel() / d;
  LayerNormGradients grads;
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

VariableGrads layer_norm_backward(const Variable& g, const Variable& x, const Variable& weight,
                                  const Tensor& mean, const Tensor& rstd, double eps,
                                  std::array<bool, 3> needs) {
  const bool affine = weight.defined();
  const bool records = GradMode::is_enabled() &&
                       (g.requires_grad() || x.requires_grad() || (affine && weight.requires_grad()));
  if (!records) {  // the fused kernel
    LayerNormGradients grads =
        layer_norm_backward(g.data(), x.data(), affine ? weight.data() : Tensor(), mean, rstd, needs);
    auto wrap = [](Tensor& t) { return t.defined() ? Variable(std::move(t)) : Variable(); };
    return {wrap(grads.input), wrap(grads.weight), wrap(grads.bias)};
  }
  // Recorded (create_graph): the kernel's three outputs would need a node each, so the same formulas are
  // composed from differentiable ops instead, with x̂ and rstd recomputed from x so that their dependence
  // on x is in the graph. gradgradcheck holds the two against each other.
  const int64_t d = x.shape().back();
  const Variable centered = sub(x, minigrad::mean(x, {-1}, /*keepdim=*/true));
  const Variable r = pow(add(minigrad::mean(mul(centered, centered), {-1}, /*keepdim=*/true), eps), -0.5);
  const Variable xhat = mul(centered, r);
  const Variable ghat = affine ? mul(g, weight) : g;
  VariableGrads grads(3);
  if (needs[0]) {
    grads[0] = mul(r, sub(sub(ghat, minigrad::mean(ghat, {-1}, true)),
                          mul(xhat, minigrad::mean(mul(ghat, xhat), {-1}, true))));
  }
  if (needs[1]) grads[1] = sum_to(mul(g, xhat), Shape{d});
  if (needs[2]) grads[2] = sum_to(g, Shape{d});
  return grads;
}

Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, double eps) {
  if (!x.defined()) throw ValueError("layer_norm", "the input is undefined");
  if (x.rank() < 1) throw ShapeError("layer_norm", "expects an input of rank >= 1, got a scalar");
  if (weight.defined() != bias.defined()) {
    throw ValueError("layer_norm", "weight and bias must both be given or both be undefined");
  }
  const int64_t d = x.shape().back();
  const bool affine = weight.defined();
  if (affine) {
    for (const Variable* p : {&weight, &bias}) {
      if (p->shape() != Shape{d}) {
        throw ShapeError("layer_norm", "weight and bias must have shape [" + std::to_string(d) +
                                           "] for an input of shape " + x.shape().str() + ", got " +
                                           p->shape().str());
      }
      if (p->dtype() != x.dtype()) throw DTypeError("layer_norm", "weight, bias and input dtypes differ");
    }
  }
  if (!(eps >= 0)) throw ValueError("layer_norm", "eps must be non-negative");

  const Tensor xc = x.data().contiguous();  // [rows, D]
  const Tensor w = affine ? weight.data().contiguous() : Tensor();
  const Tensor b = affine ? bias.data().contiguous() : Tensor();
  const int64_t rows = d == 0 ? 0 : xc.numel() / d;
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  Tensor mean = Tensor::empty({rows}, x.dtype()), rstd = Tensor::empty({rows}, x.dtype());
  dispatch_float(x.dtype(), "layer_norm", [&]<typename T>() {
    layer_norm_forward(xc.data_ptr<const T>(), affine ? w.data_ptr<const T>() : nullptr,
                       affine ? b.data_ptr<const T>() : nullptr, y.data_ptr<T>(), mean.data_ptr<T>(),
                       rstd.data_ptr<T>(), rows, d, eps);
  });

  // What the gradients need: x always, the weight for dx, and the mean and rstd per row.
  const SavedTensor sx(x), sw = affine ? save_if(weight, x.requires_grad()) : SavedTensor();
  const SavedTensor saved_mean(mean), saved_rstd(rstd);
  auto backward = [sx, sw, saved_mean, saved_rstd, eps, affine](const Variable& g,
                                                                NeedsGrad needs) -> VariableGrads {
    VariableGrads grads =
        layer_norm_backward(g, sx.variable(), sw.defined() ? sw.variable() : Variable(), saved_mean.get(),
                            saved_rstd.get(), eps, {needs[0], affine && needs[1], affine && needs[2]});
    if (!affine) grads.resize(1);
    return grads;
  };
  if (affine) return record("layer_norm", y, {x, weight, bias}, backward);
  return record("layer_norm", y, {x}, backward);
}

}  // namespace minigrad

// Softmax, log-softmax and masking.
//
// With y = softmax(x) along a row, dy_i/dx_j = y_i(δ_ij - y_j), so for upstream gradient g:
//   dx_j = Σ_i g_i·y_i(δ_ij - y_j) = y_j·(g_j - Σ_i g_i·y_i)
// and with z = log_softmax(x), dz_i/dx_j = δ_ij - softmax_j, so
//   dx_j = g_j - softmax_j·Σ_i g_i = g_j - exp(z_j)·Σ_i g_i.
// Both are one dot product per row and one pass; each is a named backward op, a fused loop over rows.
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/fast_math.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

// In softmax and log_softmax, dim may count from the end: the kernels normalize it, and name the op if
// it is out of range.

// ---- softmax: dx = y·(g - Σ g·y) ----

Variable softmax_backward(const Variable& g, const Variable& y, int64_t dim) {
  // The map g -> dx is the symmetric Jacobian diag(y) - y·yᵀ, so d/dg is this op again.
  // d/dy_k of Σ_j gg_j·dx_j = gg_k·(g_k - Σ g·y) - g_k·Σ gg·y.
  return record(
      "softmax_backward", softmax_backward(g.data(), y.data(), dim), {g, y},
      [sg = save_if(g, y.requires_grad()), sy = SavedTensor(y), dim](const Variable& gg,
                                                                     NeedsGrad needs) -> VariableGrads {
        const Variable y = sy.variable();
        Variable dg, dy;
        if (needs[0]) dg = softmax_backward(gg, y, dim);
        if (needs[1]) {
          const Variable g = sg.variable();
          dy = sub(mul(gg, sub(g, sum(mul(g, y), {dim}, /*keepdim=*/true))),
                   mul(g, sum(mul(gg, y), {dim}, /*keepdim=*/true)));
        }
        return {dg, dy};
      },
      [&](const Tangents& t) {  // linear in g; along ẏ: ẏ·(g - Σ g·y) - y·Σ g·ẏ
        return t.sum({t.has(0) ? softmax_backward(t[0], y, dim) : Variable(),
                      t.has(1) ? t[1] * (g - sum(g * y, {dim}, /*keepdim=*/true)) -
                                     y * sum(g * t[1], {dim}, /*keepdim=*/true)
                               : Variable()});
      });
}

Variable softmax(const Variable& x, int64_t dim) {
  Tensor y = softmax(x.data(), dim);
  return record(
      "softmax", y, {x},
      [sy = SavedTensor(y), dim](const Variable& g, NeedsGrad needs) -> VariableGrads {
        return {softmax_backward(g, sy.output_variable(needs), dim)};
      },
      // the Jacobian is symmetric: ẏ = y·(ẋ - Σ ẋ·y), the backward op of ẋ
      [dim](const Tangents& t) { return softmax_backward(t[0], t.output(), dim); });
}

// ---- log-softmax: dx = g - exp(z)·Σg ----

Variable log_softmax_backward(const Variable& g, const Variable& z, int64_t dim) {
  // With e = exp(z), for Σ_j gg_j·dx_j: d/dg_k = gg_k - Σ gg·e, and d/dz_k = -gg_k·e_k·Σg.
  return record(
      "log_softmax_backward", log_softmax_backward(g.data(), z.data(), dim), {g, z},
      [sg = save_if(g, z.requires_grad()), sz = SavedTensor(z), dim](const Variable& gg,
                                                                     NeedsGrad needs) -> VariableGrads {
        const Variable gg_e = mul(gg, exp(sz.variable()));
        return {needs[0] ? sub(gg, sum(gg_e, {dim}, /*keepdim=*/true)) : Variable(),
                needs[1] ? neg(mul(gg_e, sum(sg.variable(), {dim}, /*keepdim=*/true))) : Variable()};
      },
      [&](const Tangents& t) {  // linear in g; along ż: -e·ż·Σg
        return t.sum({t.has(0) ? log_softmax_backward(t[0], z, dim) : Variable(),
                      t.has(1) ? neg(exp(z) * t[1] * sum(g, {dim}, /*keepdim=*/true)) : Variable()});
      });
}

Variable log_softmax(const Variable& x, int64_t dim) {
  Tensor z = log_softmax(x.data(), dim);
  return record(
      "log_softmax", z, {x},
      [sz = SavedTensor(z), dim](const Variable& g, NeedsGrad needs) -> VariableGrads {
        return {log_softmax_backward(g, sz.output_variable(needs), dim)};
      },
      [dim](const Tangents& t) {  // ż = ẋ - Σ softmax·ẋ, softmax = exp(z)
        return t[0] - sum(exp(t.output()) * t[0], {dim}, /*keepdim=*/true);
      });
}

Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  // Filled entries no longer depend on x: their gradient is 0.
  return record(
      "masked_fill", masked_fill(x.data(), mask, value), {x},
      [sm = SavedTensor(mask)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {masked_fill(g, sm.get(), 0.0)};
      },
      [&](const Tangents& t) { return masked_fill(t[0], mask, 0.0); });
}

}  // namespace minigrad

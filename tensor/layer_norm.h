// Layer normalization over the last dimension: the forward and backward kernels (the op, with its
// checks and its recorded backward, is autograd/layer_norm.cpp).
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
#pragma once

#include <array>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// y (x's shape) and the per-row mean and rstd (rows = x.numel() / D), in x's dtype. weight and bias (D)
// are both given or both undefined (no affine). The caller checks the shapes (autograd/layer_norm.cpp).
struct LayerNormForward {
  Tensor y, mean, rstd;
};
LayerNormForward layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);

// The gradients of x, weight and bias, as layer norm's and batch norm's backward kernels return them.
struct NormGradients {
  Tensor input, weight, bias;  // undefined where not asked for
};
// The gradients from the forward's per-row mean and rstd, in one pass (weight undefined: no affine).
// `needs` says which to compute.
NormGradients layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                  const Tensor& rstd, std::array<bool, 3> needs);

}  // namespace minigrad

// Batch normalization in training mode: the forward and backward kernels (the op, with its checks, the
// running statistics and its recorded backward, is autograd/batch_norm.cpp).
//
// x is viewed as (N, C, S), S the product of the spatial sizes (1 for BatchNorm1d's (N, C)). Each channel
// c is normalised over its n = N·S values:
//   mean = Σx/n,  var = Σ(x - mean)²/n  (biased; two passes, as layer norm's)
//   rstd = 1/√(var + eps),  x̂ = (x - mean)·rstd,  y = x̂·w + b
// Backward, with ĝ = g·w, the same as layer norm's over a channel instead of a row:
//   dx = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)),  dw = Σ g·x̂,  db = Σ g
#pragma once

#include <array>

#include "minigrad/tensor/layer_norm.h"
#include "minigrad/tensor/tensor.h"

namespace minigrad {

// y (x's shape), and per channel (C) the batch mean, the biased variance and rstd, in x's dtype. weight
// and bias (C) are both given or both undefined (no affine). The caller checks the shapes.
struct BatchNormForward {
  Tensor y, mean, var, rstd;
};
BatchNormForward batch_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);

// The gradients of x, weight and bias (layer norm's three: tensor/layer_norm.h) from the forward's
// per-channel mean and rstd, in two passes over g and x (weight undefined: no affine). `needs` says which
// to compute.
NormGradients batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                  const Tensor& rstd, std::array<bool, 3> needs);

}  // namespace minigrad

// Reductions over one or more dimensions, or over everything.
//
// `keepdim` keeps each reduced dimension with size 1, so the result still broadcasts against the input:
//   x: [4,3];  sum(x, {1}) -> [4];  sum(x, {1}, true) -> [4,1];  sum(x) -> [] (a scalar).
// Sums of float32 accumulate in float64, so a sum of a million floats does not lose its low digits.
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor sum(const Tensor& x);
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor mean(const Tensor& x);

// The largest value along `dim` (NaN if any value there is NaN). argmax gives its index, as int64; on a
// tie, the first index; where there is a NaN, the first NaN's (as PyTorch).
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
// The smallest, the same way.
Tensor min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
// Over the whole tensor: a 0-dimensional value, or the row-major index (as torch.argmax without a dim).
Tensor max(const Tensor& x);
Tensor argmax(const Tensor& x);
Tensor min(const Tensor& x);
Tensor argmin(const Tensor& x);

// The p-norm (Σ|x|^p)^(1/p) of all elements, or along `dims`, as PyTorch's x.norm(p) and
// torch.linalg.vector_norm: p = 2 by default; p = inf is max |x|; any p > 0. Floating tensors only.
//   norm(g) -> []      norm(x, 1, {1}) -> [N] for x [N, D]
Tensor norm(const Tensor& x, double p = 2.0);
Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim = false);

// ---- whole-tensor questions, answered as a bool (PyTorch answers with a one-element tensor) ----
// Whether every element, or any element, is true (nonzero; NaN counts as true, as in PyTorch). all() of
// an empty tensor is true and any() false.
bool all(const Tensor& x);
bool any(const Tensor& x);
// torch.allclose's options: |a - b| <= atol + rtol·|b| elementwise.
struct AllcloseOptions {
  double rtol = 1e-5;
  double atol = 1e-8;
  bool equal_nan = false;  // whether two NaNs count as close
};
// Whether a and b (one dtype, broadcast together) are close everywhere; equal infinities are, as in
// PyTorch, and a NaN is close to nothing unless equal_nan.
bool allclose(const Tensor& a, const Tensor& b, AllcloseOptions options = {});
// torch.equal: the same shape (no broadcasting) and the same values, compared as numbers across dtypes;
// a NaN equals nothing.
bool equal(const Tensor& a, const Tensor& b);

// Sums a broadcast result back down to `shape`: over the leading dimensions `shape` lacks and over the
// dimensions where `shape` has size 1. This is the gradient of broadcasting, and the one helper every
// broadcasting op's backward uses. x's shape must be a broadcast of `shape`.
Tensor sum_to(const Tensor& x, const Shape& shape);

// Whether every element is finite (no NaN, no infinity); int64 and bool tensors always are, and a
// row-sparse tensor is when its rows are.
bool all_finite(const Tensor& t);

// ---- backward kernels: each an op's gradient, g the gradient of the op's output ----
// max (or min) along dim: g routed to the positions of the maxima (indices: argmax, or argmin, with
// keepdim), 0 elsewhere; the input's shape is `from`.
Tensor max_backward(const Tensor& g, const Tensor& indices, const Shape& from, int64_t dim);
// max(x) or min(x) over the whole tensor: the share of the gradient each element of x gets, 1/k at each of
// the k elements equal to `value` (at the NaNs if it is NaN), 0 elsewhere, as PyTorch 1.13 spreads it.
Tensor extreme_shares(const Tensor& x, const Tensor& value);

}  // namespace minigrad

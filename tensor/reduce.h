// Reductions over one or more dimensions, or over everything.
//
// `keepdim` keeps each reduced dimension with size 1, so the result still broadcasts against the input:
//   x: [4,3];  sum(x, {1}) -> [4];  sum(x, {1}, true) -> [4,1];  sum(x) -> [] (a scalar).
// Sums of float32 accumulate in float64, so a sum of a million floats does not lose its low digits.
#pragma once

#include "tensor/tensor.h"

namespace minigrad {

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor sum(const Tensor& x);
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor mean(const Tensor& x);

// The largest value along `dim` (NaN if any value there is NaN). argmax gives its index, as int64; on a
// tie, the first index.
Tensor max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);
// The row-major index of the largest element of the whole tensor (as torch.argmax without a dim).
Tensor argmax(const Tensor& x);

// Sums a broadcast result back down to `shape`: over the leading dimensions `shape` lacks and over the
// dimensions where `shape` has size 1. This is the gradient of broadcasting, and the one helper every
// broadcasting op's backward uses. x's shape must be a broadcast of `shape`.
Tensor sum_to(const Tensor& x, const Shape& shape);

// Whether every element is finite (no NaN, no infinity); int64 and bool tensors always are, and a
// row-sparse tensor is when its rows are.
bool all_finite(const Tensor& t);

// ---- backward kernels: each an op's gradient, g the gradient of the op's output ----
// max along dim: g routed to the positions of the maxima (indices: argmax with keepdim), 0 elsewhere;
// the input's shape is `from`.
Tensor max_backward(const Tensor& g, const Tensor& indices, const Shape& from, int64_t dim);

}  // namespace minigrad

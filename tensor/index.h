// Gathering and scattering along a dimension by an int64 index, as PyTorch's index_select and index_add.
// An embedding lookup is index_select on the rows of its table; its gradient is index_add into them.
//
//   table: [V, D], ids: [N] (int64)  ->  index_select(table, 0, ids): [N, D], row i is table[ids[i]]
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// out has x's shape with size index.numel() at `dim`; out[..., i, ...] = x[..., index[i], ...].
// index is a 1-D int64 tensor; an index outside [0, size) throws IndexError naming it.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);

// A copy of x with source[..., i, ...] added to x[..., index[i], ...]; repeated indices add up.
// source has x's shape with size index.numel() at `dim`.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
// The same, into x itself (PyTorch's x.index_add_): an embedding's gradient adds into a table it has just
// zeroed, which a copy would only write twice. x must be contiguous.
void index_add_(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);

// F.one_hot: int64 class indices (any shape) -> int64 (..., num_classes), 1 at each index and 0
// elsewhere. num_classes -1: the largest index + 1. An index outside [0, num_classes) throws, naming it.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

// ---- backward kernels: each an op's gradient, g the gradient of the op's output ----
// embedding: the table's gradient [V, D], each row the sum of g's rows that looked it up (a scatter-add).
Tensor embedding_backward(const Tensor& g, const Tensor& ids, int64_t vocab, int64_t padding_idx);
// slice: zeros of the input's shape `from` with g written into the part slice(dim, start, end, step) took.
Tensor slice_backward(const Tensor& g, const Shape& from, int64_t dim, int64_t start, int64_t end,
                      int64_t step);

}  // namespace minigrad

// The row-sparse layout: a (V, D) table that holds only some of its rows (PyTorch's nn.Embedding(sparse=True)
// gradient, a sparse COO tensor with one sparse dimension).
//
// A batch looks up a few thousand rows of a table of, say, 65,536 rows; the table's gradient is zero in
// every other row. As a dense tensor it is the whole table, filled at every step, and clipping, zeroing and
// the optimizer walk all of it. A row-sparse Tensor holds only the rows present:
//
//   row_indices() (K) int64, sorted, each row once      row_values() (K, D): row k is row row_indices()[k]
//
// and every row not in row_indices() is zero. It is an ordinary Tensor handle with a shape (V, D) and a
// dtype, so a gradient is one Tensor whatever its layout; what differs is asked of the tensor:
//   - add() and add_() take either layout (a sum with a dense tensor is dense; two row-sparse ones give the
//     union of their rows), so gradient accumulation only adds;
//   - the dense kernels, views and data_ptr refuse it with an error that says to call to_dense();
//   - optimizers, clipping and the all-reduce ask is_row_sparse() and work on the rows.
// Where the rows come from: embedding_backward_row_sparse below, called by autograd/embedding.cpp.
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// What a row-sparse Tensor holds besides its shape and dtype.
struct RowSparse {
  Tensor indices;  // (K) int64, sorted ascending, each row once
  Tensor values;   // (K, D), contiguous
};

// The row-sparse (V, D) = dense_shape tensor of rows (N, D) for the table rows `indices` (N, int64, any
// order, repeats allowed): the rows that share an index are summed in the order they come (the order a
// dense index_add_ adds them in, so that to_dense() equals the dense sum bit for bit).
Tensor coalesce_rows(const Tensor& indices, const Tensor& rows, const Shape& dense_shape);

// a + b where either is row-sparse (add() calls it): two row-sparse tensors give the union of their rows,
// each row present in both summed (a's first); with a dense one the sum is dense.
Tensor add_row_sparse(const Tensor& a, const Tensor& b);

// dense += alpha · sparse, into the rows present only (Tensor::add_ calls it). dense is contiguous.
void add_rows_into(const Tensor& dense, const Tensor& sparse, double alpha);

// The gradient of an embedding table (vocab, D) as rows: g's rows (ids.shape + [D]) summed per looked-up
// row. The positions of padding_idx (if >= 0) are left out, so that its row is absent rather than a row of
// zeros (which SparseAdam would still step), as in PyTorch.
Tensor embedding_backward_row_sparse(const Tensor& g, const Tensor& ids, int64_t vocab, int64_t padding_idx);

}  // namespace minigrad

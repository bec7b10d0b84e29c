// Row-sparse gradients for embedding tables (PyTorch's nn.Embedding(sparse=True)).
//
// A batch looks up a few thousand rows of a table of, say, 65,536 rows; the table's gradient is zero in
// every other row. As a dense tensor it is the whole table, filled at every step, and clipping, zeroing and
// the optimizer walk all of it. A RowSparseGrad holds only the rows present:
//
//   indices (K) int64, sorted, each row once      values (K, D): row k is the gradient of row indices[k]
//
// and every row not in `indices` is zero. The whole mechanism, in the order a step meets it:
//
//  1. embedding(weight, ids, {.sparse = true}) (autograd/embedding.cpp; nn::Embedding with
//     EmbeddingOptions::sparse): in an ordinary backward its backward function returns the weight's
//     gradient as a row-sparse Variable (Variable::row_sparse): the looked-up rows, summed per row
//     (coalesce). With create_graph the gradient must carry a graph of its own, which a RowSparseGrad
//     cannot, so there it returns the dense gradient, as without the flag.
//  2. The engine (autograd/engine.cpp) keeps the gradient row-sparse only where it goes straight into a
//     leaf's gradient: added to a row-sparse gradient it is coalesced with it (the union of the rows), and
//     added to a dense one it is added into those rows. Anywhere else it is made dense first: into the
//     output of another op (a table computed from something else), and into what grad()
//     (autograd/grad.h) returns.
//  3. The leaf: has_sparse_grad() says which kind its gradient is and sparse_grad() gives the rows.
//     grad() still gives a dense tensor, but turns the gradient dense to do so (one table-sized buffer),
//     and it stays dense. zero_grad() drops it, whatever its size.
//  4. Whoever reads gradients asks has_sparse_grad() first: optim::SGD (without momentum) and
//     optim::SparseAdam update only the rows present, Adam and AdamW refuse, optim::clip_grad_norm
//     scales the rows, distributed::average_gradients gathers the rows of every rank.
//
// What a RowSparseGrad cannot hold it does not pretend to: only 2-D tables, rows present or absent.
#pragma once

#include <string_view>

#include "tensor/tensor.h"

namespace minigrad {

struct RowSparseGrad {
  Tensor indices;     // (K) int64, sorted ascending, each row once
  Tensor values;      // (K, D), contiguous: row k is the gradient of row indices[k] of the table
  Shape dense_shape;  // (V, D): the table's shape

  DType dtype() const { return values.dtype(); }
  int64_t rows() const { return indices.numel(); }  // K

  // The dense (V, D) gradient: zeros with the rows in place. Costs a table-sized buffer.
  Tensor to_dense() const;
  // dense += this, into the rows present only. dense is (V, D) of the same dtype and contiguous.
  void add_to(const Tensor& dense) const;
  // Throws, naming `op`, unless the fields are as described above (Variable::set_sparse_grad asks).
  void check(std::string_view op) const;
};

// The gradient of a table of `dense_shape` (V, D) from rows (N, D) for the table rows `indices` (N,
// int64, any order, repeats allowed): the rows that share an index are summed, in the order they come
// (the order a dense index_add_ adds them in, so that to_dense() equals the dense gradient bit for bit).
RowSparseGrad coalesce(const Tensor& indices, const Tensor& rows, const Shape& dense_shape);

// a + b: the union of their rows, each row present in both summed (a's first). The same table and dtype.
RowSparseGrad add(const RowSparseGrad& a, const RowSparseGrad& b);

}  // namespace minigrad

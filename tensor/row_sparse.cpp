#include "minigrad/tensor/row_sparse.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "minigrad/tensor/elementwise.h"
#include "minigrad/tensor/index.h"

namespace minigrad {

// ---- the layout itself: Tensor's members for it ----

Tensor Tensor::row_sparse(Tensor indices, Tensor values, const Shape& dense_shape) {
  constexpr std::string_view op = "row_sparse";
  if (!indices.defined() || !values.defined())
    throw ValueError(op, "the indices or the values are undefined");
  check_dtype(op, "the row indices", indices, DType::Int64);
  if (!is_floating(values.dtype())) {
    throw DTypeError(op,
                     "the values must be float32 or float64, got " + std::string(dtype_name(values.dtype())));
  }
  if (dense_shape.rank() != 2 || indices.rank() != 1 || values.rank() != 2 ||
      values.shape()[0] != indices.numel() || values.shape()[1] != dense_shape[1]) {
    throw ShapeError(op, "row-sparse values " + values.shape().str() + " for indices " +
                             indices.shape().str() + " of a table " + dense_shape.str() +
                             ": need (K, D), (K) and (V, D)");
  }
  const std::vector<int64_t> ids = indices.to_vector<int64_t>();
  for (size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] < 0 || ids[k] >= dense_shape[0] || (k > 0 && ids[k] <= ids[k - 1])) {
      throw IndexError(op, "the row indices must be sorted, each once, within a table of " +
                               std::to_string(dense_shape[0]) + " rows (coalesce_rows() makes them so)");
    }
  }
  Tensor out;
  out.sparse_ = std::make_shared<const RowSparse>(RowSparse{indices.contiguous(), values.contiguous()});
  out.shape_ = dense_shape;
  out.strides_ = contiguous_strides(dense_shape);  // never used to read: kept sane for code that loops
  out.dtype_ = values.dtype();
  return out;
}

const Tensor& Tensor::row_indices() const {
  if (!sparse_) throw ValueError("row_indices", "the tensor is not row-sparse (ask is_row_sparse() first)");
  return sparse_->indices;
}

const Tensor& Tensor::row_values() const {
  if (!sparse_) throw ValueError("row_values", "the tensor is not row-sparse (ask is_row_sparse() first)");
  return sparse_->values;
}

Tensor Tensor::to_dense() const {
  if (!sparse_) return *this;
  Tensor dense = zeros(shape_, dtype_);  // (V, D)
  index_add_(dense, 0, sparse_->indices, sparse_->values);
  return dense;
}

// ---- arithmetic across layouts ----

Tensor coalesce_rows(const Tensor& indices, const Tensor& rows, const Shape& dense_shape) {
  constexpr std::string_view op = "coalesce_rows";
  if (!indices.defined() || !rows.defined()) throw ValueError(op, "an operand is undefined");
  check_dtype(op, "the row indices", indices, DType::Int64);
  if (dense_shape.rank() != 2 || indices.rank() != 1 || rows.rank() != 2 ||
      rows.shape()[0] != indices.numel() || rows.shape()[1] != dense_shape[1]) {
    throw ShapeError(op, "rows " + rows.shape().str() + " for indices " + indices.shape().str() +
                             " of a table " + dense_shape.str() + ": need (N, D), (N) and (V, D)");
  }
  const std::vector<int64_t> ids = indices.to_vector<int64_t>();  // (N)
  const int64_t vocab = dense_shape[0];
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab) {
      throw IndexError(
          op, "row " + std::to_string(id) + " is outside a table of " + std::to_string(vocab) + " rows");
    }
  }
  // The positions in order of their row; a stable sort keeps the positions of one row in their order.
  std::vector<int64_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ids[a] < ids[b]; });
  // Each distinct row gets an output slot; each position learns the slot its row went to.
  std::vector<int64_t> unique, slot_of_position(ids.size());
  for (int64_t position : order) {
    if (unique.empty() || unique.back() != ids[position]) unique.push_back(ids[position]);
    slot_of_position[position] = static_cast<int64_t>(unique.size()) - 1;
  }
  const auto k = static_cast<int64_t>(unique.size());
  Tensor values = Tensor::zeros({k, dense_shape[1]}, rows.dtype());  // (K, D)
  // The rows added into their slots in position order: index_add_ adds them one after another, as the
  // dense gradient's index_add_ does, so each row's sum is the same, bit for bit.
  index_add_(values, 0, Tensor::from_vector(slot_of_position, {indices.numel()}), rows);
  return Tensor::row_sparse(Tensor::from_vector(unique, {k}), values, dense_shape);
}

Tensor add_row_sparse(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) {
    throw ShapeError("add", "a row-sparse tensor " + describe(a.shape(), a.dtype()) + " and a tensor " +
                                describe(b.shape(), b.dtype()) + ": the shapes and dtypes must be the same");
  }
  if (a.is_row_sparse() && b.is_row_sparse()) {
    return coalesce_rows(concat({a.row_indices(), b.row_indices()}, 0),
                         concat({a.row_values(), b.row_values()}, 0), a.shape());
  }
  const Tensor& sparse = a.is_row_sparse() ? a : b;
  Tensor sum = (a.is_row_sparse() ? b : a).clone();
  add_rows_into(sum, sparse, 1.0);
  return sum;
}

void add_rows_into(const Tensor& dense, const Tensor& sparse, double alpha) {
  if (dense.is_row_sparse() || dense.shape() != sparse.shape() || dense.dtype() != sparse.dtype()) {
    throw ShapeError("add_", "a row-sparse tensor " + describe(sparse.shape(), sparse.dtype()) +
                                 " added into " + describe(dense.shape(), dense.dtype()) +
                                 (dense.is_row_sparse() ? " row-sparse (use add())" : ""));
  }
  index_add_(dense, 0, sparse.row_indices(),
             alpha == 1.0 ? sparse.row_values() : mul(sparse.row_values(), alpha));
}

Tensor embedding_backward_row_sparse(const Tensor& g, const Tensor& ids, int64_t vocab, int64_t padding_idx) {
  const int64_t dim = g.shape().back();
  Tensor flat_ids = ids.reshape({-1}), rows = g.reshape({-1, dim});  // (N), (N, D)
  if (padding_idx >= 0) {
    const std::vector<int64_t> all = flat_ids.to_vector<int64_t>();
    std::vector<int64_t> kept;  // the positions that did not look up the padding row
    for (size_t n = 0; n < all.size(); ++n) {
      if (all[n] != padding_idx) kept.push_back(static_cast<int64_t>(n));
    }
    if (kept.size() < all.size()) {
      const Tensor keep = Tensor::from_vector(kept, {static_cast<int64_t>(kept.size())});
      flat_ids = index_select(flat_ids, 0, keep);
      rows = index_select(rows, 0, keep);
    }
  }
  return coalesce_rows(flat_ids, rows, {vocab, dim});
}

}  // namespace minigrad

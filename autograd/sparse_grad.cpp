#include "autograd/sparse_grad.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "tensor/index.h"

namespace minigrad {

Tensor RowSparseGrad::to_dense() const {
  Tensor dense = Tensor::zeros(dense_shape, dtype());  // (V, D)
  add_to(dense);
  return dense;
}

void RowSparseGrad::add_to(const Tensor& dense) const {
  if (dense.shape() != dense_shape || dense.dtype() != dtype()) {
    throw ShapeError("RowSparseGrad::add_to", "a row-sparse gradient of " + describe(dense_shape, dtype()) +
                                                  " added into " + describe(dense.shape(), dense.dtype()));
  }
  index_add_(dense, 0, indices, values);
}

void RowSparseGrad::check(std::string_view op) const {
  if (!indices.defined() || !values.defined()) throw ValueError(op, "a row-sparse gradient is undefined");
  check_dtype(op, "the row indices", indices, DType::Int64);
  if (dense_shape.rank() != 2 || indices.rank() != 1 || values.rank() != 2 || !values.is_contiguous() ||
      values.shape()[0] != indices.numel() || values.shape()[1] != dense_shape[1]) {
    throw ShapeError(op, "row-sparse values " + values.shape().str() + " for indices " +
                             indices.shape().str() + " of a table " + dense_shape.str() +
                             ": need (K, D) contiguous, (K) and (V, D)");
  }
  const std::vector<int64_t> ids = indices.to_vector<int64_t>();
  for (size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] < 0 || ids[k] >= dense_shape[0] || (k > 0 && ids[k] <= ids[k - 1])) {
      throw IndexError(op, "the row indices must be sorted, each once, within a table of " +
                               std::to_string(dense_shape[0]) + " rows (coalesce() makes them so)");
    }
  }
}

RowSparseGrad coalesce(const Tensor& indices, const Tensor& rows, const Shape& dense_shape) {
  if (!indices.defined() || !rows.defined()) throw ValueError("coalesce", "an operand is undefined");
  check_dtype("coalesce", "the row indices", indices, DType::Int64);
  if (dense_shape.rank() != 2 || indices.rank() != 1 || rows.rank() != 2 ||
      rows.shape()[0] != indices.numel() || rows.shape()[1] != dense_shape[1]) {
    throw ShapeError("coalesce", "rows " + rows.shape().str() + " for indices " + indices.shape().str() +
                                     " of a table " + dense_shape.str() + ": need (N, D), (N) and (V, D)");
  }
  const std::vector<int64_t> ids = indices.to_vector<int64_t>();  // (N)
  const int64_t vocab = dense_shape[0];
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab) {
      throw IndexError("coalesce", "row " + std::to_string(id) + " is outside a table of " +
                                       std::to_string(vocab) + " rows");
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
  RowSparseGrad out{Tensor::from_vector(unique, {k}), Tensor::zeros({k, dense_shape[1]}, rows.dtype()),
                    dense_shape};
  // The rows added into their slots in position order: index_add_ adds them one after another, as the
  // dense gradient's index_add_ does, so each row's sum is the same, bit for bit.
  index_add_(out.values, 0, Tensor::from_vector(slot_of_position, {indices.numel()}), rows);
  return out;
}

RowSparseGrad add(const RowSparseGrad& a, const RowSparseGrad& b) {
  if (a.dense_shape != b.dense_shape || a.dtype() != b.dtype()) {
    throw ShapeError("add", "row-sparse gradients of " + describe(a.dense_shape, a.dtype()) + " and " +
                                describe(b.dense_shape, b.dtype()));
  }
  return coalesce(concat({a.indices, b.indices}, 0), concat({a.values, b.values}, 0), a.dense_shape);
}

}  // namespace minigrad

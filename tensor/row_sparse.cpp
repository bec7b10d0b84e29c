#include "minigrad/tensor/row_sparse.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "minigrad/tensor/elementwise.h"
#include "minigrad/tensor/index.h"
#include "minigrad/tensor/threads.h"

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

namespace {

// A position of the rows being coalesced, and the table row it adds to.
struct RowAt {
  int64_t row;
  int64_t position;
};

// The positions of `ids` (N, rows of a table of `vocab`), those of `skip_row` left out, in order of their
// row and, within a row, in their own order. A least-significant-digit radix sort, 11 bits of the row a
// pass (a table of 2^20 rows takes two): each pass is a counting sort, which keeps entries of one digit in
// the order they came, so after the last pass the order is by row and, within a row, by position. (A
// std::stable_sort with a comparison was most of the main job's sparse backward: docs/performance.md.)
std::vector<RowAt> positions_by_row(const int64_t* ids, int64_t n, int64_t vocab, int64_t skip_row) {
  constexpr int kDigitBits = 11;
  constexpr int64_t kDigits = int64_t{1} << kDigitBits;
  std::vector<RowAt> order, next;  // (N less skip_row's positions)
  order.reserve(static_cast<size_t>(n));
  for (int64_t p = 0; p < n; ++p) {
    if (ids[p] != skip_row) order.push_back({ids[p], p});
  }
  next.resize(order.size());
  for (int shift = 0; shift < 63 && ((vocab - 1) >> shift) > 0; shift += kDigitBits) {
    auto digit = [&](const RowAt& e) { return static_cast<size_t>((e.row >> shift) & (kDigits - 1)); };
    std::vector<size_t> start(kDigits + 1, 0);  // start[d]: where digit d's entries go
    for (const RowAt& e : order) ++start[digit(e) + 1];
    std::partial_sum(start.begin(), start.end(), start.begin());
    for (const RowAt& e : order) next[start[digit(e)]++] = e;
    order.swap(next);
  }
  return order;
}

// coalesce_rows, with the positions of `skip_row` left out (-1: none).
Tensor coalesce_rows_except(const Tensor& indices, const Tensor& rows, const Shape& dense_shape,
                            int64_t skip_row) {
  constexpr std::string_view op = "coalesce_rows";
  if (!indices.defined() || !rows.defined()) throw ValueError(op, "an operand is undefined");
  check_dtype(op, "the row indices", indices, DType::Int64);
  if (dense_shape.rank() != 2 || indices.rank() != 1 || rows.rank() != 2 ||
      rows.shape()[0] != indices.numel() || rows.shape()[1] != dense_shape[1]) {
    throw ShapeError(op, "rows " + rows.shape().str() + " for indices " + indices.shape().str() +
                             " of a table " + dense_shape.str() + ": need (N, D), (N) and (V, D)");
  }
  const Tensor flat_ids = indices.contiguous();  // (N)
  const int64_t* ids = flat_ids.data_ptr<const int64_t>();
  const int64_t n = indices.numel(), vocab = dense_shape[0], dim = dense_shape[1];
  for (int64_t p = 0; p < n; ++p) {
    if (ids[p] < 0 || ids[p] >= vocab) {
      throw IndexError(
          op, "row " + std::to_string(ids[p]) + " is outside a table of " + std::to_string(vocab) + " rows");
    }
  }
  const std::vector<RowAt> order = positions_by_row(ids, n, vocab, skip_row);
  // Each distinct row, and where its positions start in `order`: unique[k]'s are [first[k], first[k + 1]).
  std::vector<int64_t> unique, first;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || order[i].row != order[i - 1].row) {
      unique.push_back(order[i].row);
      first.push_back(static_cast<int64_t>(i));
    }
  }
  first.push_back(static_cast<int64_t>(order.size()));
  const auto k = static_cast<int64_t>(unique.size());
  const Tensor source = rows.contiguous();                // (N, D)
  Tensor values = Tensor::zeros({k, dim}, rows.dtype());  // (K, D)
  dispatch_float(rows.dtype(), op, [&]<typename T>() {
    const T* from = source.data_ptr<const T>();
    T* to = values.data_ptr<T>();
    // Each row is zero plus its positions' rows in their order: the additions a dense index_add_ makes, in
    // the same order, so to_dense() equals the dense gradient bit for bit. Threads split the rows.
    const int64_t per_row = k > 0 ? static_cast<int64_t>(order.size()) / k * dim : 0;
    parallel_for(k, per_row, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        T* sum = to + r * dim;
        for (int64_t i = first[static_cast<size_t>(r)]; i < first[static_cast<size_t>(r) + 1]; ++i) {
          const T* add = from + order[static_cast<size_t>(i)].position * dim;
          for (int64_t j = 0; j < dim; ++j) sum[j] += add[j];
        }
      }
    });
  });
  return Tensor::row_sparse(Tensor::from_vector(unique, {k}), values, dense_shape);
}

}  // namespace

Tensor coalesce_rows(const Tensor& indices, const Tensor& rows, const Shape& dense_shape) {
  return coalesce_rows_except(indices, rows, dense_shape, -1);
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
  // (N) ids and (N, D) rows; the padding row's positions are left out
  return coalesce_rows_except(ids.reshape({-1}), g.reshape({-1, dim}), {vocab, dim}, padding_idx);
}

}  // namespace minigrad

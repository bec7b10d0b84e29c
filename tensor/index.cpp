#include "minigrad/tensor/index.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// Validates `index` against dimension `dim` of x and returns it as a contiguous int64 tensor.
Tensor checked_index(std::string_view op, const Tensor& x, int dim, const Tensor& index) {
  if (!index.defined()) throw ValueError(op, "the index is undefined");
  check_dtype(op, "the index", index, DType::Int64);
  if (index.rank() != 1) throw ShapeError(op, "the index must be 1-D, got shape " + index.shape().str());
  const Tensor c = index.contiguous();
  const int64_t* p = c.data_ptr<const int64_t>();
  const int64_t size = x.shape()[dim], count = c.numel();
  for (int64_t i = 0; i < count; ++i) {
    if (p[i] < 0 || p[i] >= size) {
      throw IndexError(op, "index " + std::to_string(p[i]) + " is out of range for dimension " +
                               std::to_string(dim) + " of size " + std::to_string(size));
    }
  }
  return c;
}

}  // namespace

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  if (!indices.defined() || indices.dtype() != DType::Int64) {
    throw DTypeError("one_hot", "expects int64 class indices, got " +
                                    (indices.defined() ? std::string(dtype_name(indices.dtype())) : "none"));
  }
  const std::vector<int64_t> ids = indices.to_vector<int64_t>();
  if (num_classes < 0) {
    if (ids.empty()) throw ValueError("one_hot", "cannot infer num_classes from an empty tensor");
    num_classes = *std::max_element(ids.begin(), ids.end()) + 1;
  }
  Shape shape = indices.shape();
  shape.push_back(num_classes);
  Tensor out = Tensor::zeros(shape, DType::Int64);
  int64_t* o = out.data_ptr<int64_t>();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= num_classes) {
      throw IndexError("one_hot", "class " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                                      " is outside [0, " + std::to_string(num_classes) + ")");
    }
    o[static_cast<int64_t>(i) * num_classes + ids[i]] = 1;  // (..., C), row-major
  }
  return out;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  if (!x.defined()) throw ValueError("index_select", "the tensor is undefined");
  const int d = normalize_dim("index_select", dim, x.rank());
  const Tensor idx = checked_index("index_select", x, d, index);
  const Tensor c = x.contiguous();
  Shape shape = x.shape();
  shape[d] = idx.numel();
  Tensor out = Tensor::empty(shape, x.dtype());
  const auto [outer, size, inner] = split_around(x.shape(), d);
  const int64_t count = idx.numel();
  const size_t row_bytes = static_cast<size_t>(inner) * element_size(x.dtype());
  const auto* src = static_cast<const char*>(c.storage()->data()) + c.offset() * element_size(x.dtype());
  auto* dst = static_cast<char*>(out.storage()->data());
  const int64_t* ids = idx.data_ptr<const int64_t>();
  // Each output row is a copy of one input row of `inner` elements.
  parallel_for(outer * count, inner, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / count, i = r % count;
      std::memcpy(dst + r * row_bytes, src + (o * size + ids[i]) * row_bytes, row_bytes);
    }
  });
  return out;
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  if (!x.defined()) throw ValueError("index_add", "an operand is undefined");
  Tensor out = x.clone();
  index_add_(out, dim, index, source);
  return out;
}

void index_add_(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& source) {
  const Tensor& x = out;
  if (!x.defined() || !source.defined()) throw ValueError("index_add", "an operand is undefined");
  if (!x.is_contiguous()) throw ValueError("index_add_", "adds into a contiguous tensor only");
  const int d = normalize_dim("index_add", dim, x.rank());
  const Tensor idx = checked_index("index_add", x, d, index);
  Shape expected = x.shape();
  expected[d] = idx.numel();
  if (source.shape() != expected) {
    throw ShapeError("index_add", "source of shape " + source.shape().str() + " does not match " +
                                      expected.str() + " (x's shape with the index's length at dim " +
                                      std::to_string(d) + ")");
  }
  if (source.dtype() != x.dtype()) {
    throw DTypeError("index_add", "dtypes " + std::string(dtype_name(x.dtype())) + " and " +
                                      std::string(dtype_name(source.dtype())) + " differ");
  }
  const Tensor src = source.contiguous();
  const auto [outer, size, inner] = split_around(x.shape(), d);
  const int64_t count = idx.numel();
  const int64_t* ids = idx.data_ptr<const int64_t>();
  dispatch_float(x.dtype(), "index_add", [&]<typename T>() {
    T* po = out.data_ptr<T>();
    const T* ps = src.data_ptr<const T>();
    // Threads split the outer dimension only: two ids may name the same row, so the rows of one outer
    // slice are added by one thread, in order, which also keeps the result deterministic.
    parallel_for(outer, count * inner, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        for (int64_t i = 0; i < count; ++i) {
          T* row = po + (o * size + ids[i]) * inner;
          const T* add = ps + (o * count + i) * inner;
          for (int64_t j = 0; j < inner; ++j) row[j] += add[j];
        }
      }
    });
  });
  out.bump_version();
}

// The weight's gradient: row r is the sum of the gradients g (ids.shape + [D]) of the positions that
// looked row r up (a scatter-add). The padding row stays a constant (zero) vector: it must not learn
// from the positions it pads.
Tensor embedding_backward(const Tensor& g, const Tensor& ids, int64_t vocab, int64_t padding_idx) {
  const int64_t dim = g.shape().back();
  Tensor gw = Tensor::zeros({vocab, dim}, g.dtype());
  index_add_(gw, 0, ids.reshape({-1}), g.reshape({-1, dim}));
  if (padding_idx >= 0 && padding_idx < vocab) gw.select(0, padding_idx).zero_();
  return gw;
}

// The gradient of a slice: zeros of the input's shape with `g` written into the sliced part. An op of its
// own, linear in g, whose gradient is the same slice again.
Tensor slice_backward(const Tensor& g, const Shape& from, int64_t dim, int64_t start, int64_t end,
                      int64_t step) {
  Tensor gx = Tensor::zeros(from, g.dtype());
  gx.slice(dim, start, end, step).copy_(g);
  return gx;
}

}  // namespace minigrad

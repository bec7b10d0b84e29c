#include "tensor/reduce.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/threads.h"

namespace minigrad {

namespace {

// A contiguous tensor viewed as [outer, reduced, inner], the reduced part being a run of adjacent
// dimensions (split_around). Every reduction here is a loop over this layout.
using Reduction = AroundDims;

// Sums are accumulated in double whatever the element type.
template <typename T>
void sum_kernel(const T* x, T* out, const Reduction& r) {
  if (r.inner == 1) {
    // Each output is the sum of one contiguous row.
    parallel_for(r.outer, r.size, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* row = x + o * r.size;
        double acc = 0;
#pragma omp simd reduction(+ : acc)
        for (int64_t k = 0; k < r.size; ++k) acc += row[k];
        out[o] = static_cast<T>(acc);
      }
    });
    return;
  }
  // Each output column (o, i) sums `reduced` values `inner` apart; walk a block of columns together so
  // the innermost loop reads contiguous memory.
  parallel_for(r.outer * r.inner, r.size, [&](int64_t begin, int64_t end) {
    std::vector<double> acc;
    for (int64_t p = begin; p < end;) {
      const int64_t o = p / r.inner, i0 = p % r.inner, i1 = std::min(r.inner, i0 + (end - p));
      acc.assign(static_cast<size_t>(i1 - i0), 0.0);
      for (int64_t k = 0; k < r.size; ++k) {
        const T* row = x + (o * r.size + k) * r.inner;
        for (int64_t i = i0; i < i1; ++i) acc[i - i0] += row[i];
      }
      for (int64_t i = i0; i < i1; ++i) out[o * r.inner + i] = static_cast<T>(acc[i - i0]);
      p += i1 - i0;
    }
  });
}

// The result shape of reducing dims [first, last] of `shape`.
Shape reduced_shape(const Shape& shape, int first, int last, bool keepdim) {
  Shape out;
  for (int d = 0; d < shape.rank(); ++d) {
    if (d < first || d > last) {
      out.push_back(shape[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

// Sums over the adjacent dims [first, last] in one pass.
Tensor sum_range(const Tensor& x, int first, int last, bool keepdim) {
  const Tensor c = x.contiguous();
  Tensor out = Tensor::empty(reduced_shape(x.shape(), first, last, keepdim), x.dtype());
  dispatch_float(x.dtype(), "sum", [&]<typename T>() {
    sum_kernel(c.data_ptr<const T>(), out.data_ptr<T>(), split_around(x.shape(), first, last));
  });
  return out;
}

// Validated, sorted, de-duplicated dims.
std::vector<int> normalize_dims(std::string_view op, const Tensor& x, const Shape& dims) {
  if (!x.defined()) throw ValueError(op, "the tensor is undefined");
  std::vector<int> out;
  for (int64_t d : dims) out.push_back(normalize_dim(op, d, x.rank()));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw ShapeError(op, "dims " + dims.str() + " name a dimension twice");
  }
  return out;
}

template <typename T>
bool better(T v, T best) {
  // Strictly greater keeps the first of equal values; a NaN wins and then stays.
  return v > best || (std::isnan(v) && !std::isnan(best));
}

// Both max and argmax along one dimension; either output pointer may be null.
template <typename T>
void max_kernel(const T* x, T* values, int64_t* indices, const Reduction& r) {
  parallel_for(r.outer * r.inner, r.size, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t o = p / r.inner, i = p % r.inner;
      const T* column = x + o * r.size * r.inner + i;
      T best = column[0];
      int64_t arg = 0;
      for (int64_t k = 1; k < r.size; ++k) {
        if (better(column[k * r.inner], best)) {
          best = column[k * r.inner];
          arg = k;
        }
      }
      if (values) values[p] = best;
      if (indices) indices[p] = arg;
    }
  });
}

// Runs max_kernel along `dim`, filling whichever of values/indices the caller wants.
void max_along(std::string_view op, const Tensor& x, int64_t dim, bool keepdim, Tensor* values,
               Tensor* indices) {
  if (!x.defined()) throw ValueError(op, "the tensor is undefined");
  const int d = normalize_dim(op, dim, x.rank());
  if (x.shape()[d] == 0) throw ShapeError(op, "cannot reduce an empty dimension of shape " + x.shape().str());
  const Tensor c = x.contiguous();
  const Shape shape = reduced_shape(x.shape(), d, d, keepdim);
  dispatch_float(x.dtype(), op, [&]<typename T>() {
    if (values) *values = Tensor::empty(shape, x.dtype());
    if (indices) *indices = Tensor::empty(shape, DType::Int64);
    max_kernel(c.data_ptr<const T>(), values ? values->data_ptr<T>() : nullptr,
               indices ? indices->data_ptr<int64_t>() : nullptr, split_around(x.shape(), d, d));
  });
}

}  // namespace

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  const std::vector<int> ds = normalize_dims("sum", x, dims);
  if (ds.empty()) return x.clone();
  if (ds.back() - ds.front() + 1 == static_cast<int>(ds.size())) {
    return sum_range(x, ds.front(), ds.back(), keepdim);  // adjacent dims: one pass
  }
  // Otherwise one dim at a time, from the last so that earlier indices stay valid.
  Tensor out = x;
  for (auto it = ds.rbegin(); it != ds.rend(); ++it) out = sum_range(out, *it, *it, keepdim);
  return out;
}

Tensor sum(const Tensor& x) {
  if (!x.defined()) throw ValueError("sum", "the tensor is undefined");
  return sum_range(x.reshape({-1}), 0, 0, false);
}

Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  const std::vector<int> ds = normalize_dims("mean", x, dims);
  int64_t count = 1;
  for (int d : ds) count *= x.shape()[d];
  Tensor out = sum(x, dims, keepdim);
  out.mul_(1.0 / static_cast<double>(count));
  return out;
}

Tensor mean(const Tensor& x) {
  Tensor out = sum(x);
  out.mul_(1.0 / static_cast<double>(x.numel()));
  return out;
}

Tensor max(const Tensor& x, int64_t dim, bool keepdim) {
  Tensor values;
  max_along("max", x, dim, keepdim, &values, nullptr);
  return values;
}

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  Tensor indices;
  max_along("argmax", x, dim, keepdim, nullptr, &indices);
  return indices;
}

Tensor max(const Tensor& x) {
  if (!x.defined()) throw ValueError("max", "the tensor is undefined");
  return max(x.reshape({-1}), 0, false);
}

Tensor argmax(const Tensor& x) {
  if (!x.defined()) throw ValueError("argmax", "the tensor is undefined");
  return argmax(x.reshape({-1}), 0, false);
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (!x.defined()) throw ValueError("sum_to", "the tensor is undefined");
  if (x.shape() == shape) return x;
  const int lead = x.rank() - shape.rank();
  bool reducible = lead >= 0;
  Shape dims;
  for (int d = 0; reducible && d < x.rank(); ++d) {
    if (d < lead) {
      dims.push_back(d);
    } else if (shape[d - lead] != x.shape()[d]) {
      reducible = shape[d - lead] == 1;
      dims.push_back(d);
    }
  }
  if (!reducible) {
    throw ShapeError("sum_to", "shape " + x.shape().str() + " cannot be summed down to " + shape.str() +
                                   " (it is not a broadcast of it)");
  }
  return sum(x, dims, true).reshape(shape);
}

// Each output gradient routed to the position its maximum came from (indices: argmax with keepdim),
// zero elsewhere: a tensor of the input's shape `from`.
Tensor max_backward(const Tensor& g, const Tensor& indices, const Shape& from, int64_t dim) {
  const int d = normalize_dim("max_backward", dim, from.rank());
  Tensor gx = Tensor::zeros(from, g.dtype());
  const Tensor gk = g.reshape(indices.shape()).contiguous();
  const auto [outer, n, inner] = split_around(from, d);
  const int64_t* idx = indices.data_ptr<const int64_t>();
  dispatch_float(g.dtype(), "max_backward", [&]<typename T>() {
    const T* pg = gk.data_ptr<const T>();
    T* px = gx.data_ptr<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) px[(o * n + idx[o * inner + i]) * inner + i] = pg[o * inner + i];
    }
  });
  return gx;
}

bool all_finite(const Tensor& t) {
  if (!is_floating(t.dtype())) return true;
  bool finite = true;
  const Tensor c = t.is_row_sparse() ? t.row_values() : t.contiguous();  // the rows absent are zeros
  dispatch_float(t.dtype(), "all_finite", [&]<typename T>() {
    const T* p = c.data_ptr<const T>();
    for (int64_t i = 0; i < c.numel() && finite; ++i) finite = std::isfinite(p[i]);
  });
  return finite;
}

}  // namespace minigrad

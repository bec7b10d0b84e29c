#include "minigrad/tensor/reduce.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "minigrad/tensor/column_sums.h"
#include "minigrad/tensor/elementwise.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

namespace {

// A contiguous tensor viewed as [outer, reduced, inner], the reduced part being a run of adjacent
// dimensions (split_around). Every reduction here is a loop over this layout.
using Reduction = AroundDims;

// Rows up to this long are summed down their columns in blocks of rows (tensor/column_sums.h); wider ones
// by ranges of columns, which then read long contiguous runs.
constexpr int64_t kMaxBlockedRowLength = 1024;

// Sums are accumulated in double whatever the element type.
template <typename T>
void sum_kernel(const T* x, T* out, const Reduction& r) {
  if (r.outer * r.inner == 0) return;  // no sums to write
  if (r.size == 0) {                   // sums of nothing
    std::fill_n(out, r.outer * r.inner, T(0));
    return;
  }
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
  if (r.inner <= kMaxBlockedRowLength) {
    // Each output column (o, i) sums `size` values `inner` apart: a column sum of `size` rows, in blocks of
    // rows (tensor/column_sums.h). Item ob = (o, block) of outer × blocks sums its block's rows into
    // its own float64 sums: partial's, or, with one block a row, the thread's, written straight to out.
    const int64_t block = detail::rows_per_sum_block(r.inner);
    const int64_t blocks = (r.size + block - 1) / block;
    detail::BlockSums partial(blocks > 1 ? r.outer * blocks : 0, r.inner);  // (outer, blocks, inner)
    parallel_for(r.outer * blocks, std::min(block, r.size) * r.inner, [&](int64_t begin, int64_t end) {
      detail::BlockSums own(blocks > 1 ? 0 : 1, r.inner);
      for (int64_t ob = begin; ob < end; ++ob) {
        const int64_t o = ob / blocks, k1 = std::min(r.size, (ob % blocks + 1) * block);
        double* acc = blocks > 1 ? partial.block(ob) : own.block(0);
        std::fill_n(acc, r.inner, 0.0);
        const T* rows = x + o * r.size * r.inner;  // (size, inner)
        int64_t k = (ob % blocks) * block;
        // Short rows four at a time, so that the loop over a row is not mostly its own overhead; wide ones a
        // row at a time, where four at once was slower (measured: docs/history/performance.md, "Figures
        // from code comments").
        if (r.inner < 256) {
          for (; k + 4 <= k1; k += 4) {
            const T* x0 = rows + k * r.inner;
            const T* x1 = x0 + r.inner;
            const T* x2 = x1 + r.inner;
            const T* x3 = x2 + r.inner;
#pragma omp simd
            for (int64_t i = 0; i < r.inner; ++i)
              acc[i] += (double(x0[i]) + double(x1[i])) + (double(x2[i]) + double(x3[i]));
          }
        }
        for (; k < k1; ++k) {
          const T* row = rows + k * r.inner;
#pragma omp simd
          for (int64_t i = 0; i < r.inner; ++i) acc[i] += row[i];
        }
        if (blocks == 1) {
          for (int64_t i = 0; i < r.inner; ++i) out[o * r.inner + i] = static_cast<T>(acc[i]);
        }
      }
    });
    if (blocks > 1) detail::add_block_sums(partial, out, r.outer, blocks, r.inner);
    return;
  }
  // Wider rows: each thread takes a range of columns (o, i), walking them together so that the innermost
  // loop reads contiguous memory.
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

// Which extreme a value-selecting reduction looks for.
enum class Extreme { Max, Min };

template <Extreme E, typename T>
bool better(T v, T best) {
  // Strictly better keeps the first of equal values; a NaN wins and then stays (as PyTorch's max and min).
  const bool beats = E == Extreme::Max ? v > best : v < best;
  return beats || (std::isnan(v) && !std::isnan(best));
}

// The extreme value and its index along one dimension; either output pointer may be null.
template <Extreme E, typename T>
void extreme_kernel(const T* x, T* values, int64_t* indices, const Reduction& r) {
  if (r.inner == 1) {
    // Each output looks along one contiguous row.
    parallel_for(r.outer, r.size, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* row = x + o * r.size;
        T best = row[0];
        int64_t arg = 0;
        for (int64_t k = 1; k < r.size; ++k) {
          if (better<E>(row[k], best)) {
            best = row[k];
            arg = k;
          }
        }
        if (values) values[o] = best;
        if (indices) indices[o] = arg;
      }
    });
    return;
  }
  // Each output column (o, i) looks at `size` values `inner` apart: a block of columns is walked together,
  // row by row, so that the innermost loop reads contiguous memory and has no branch. At most 512
  // columns at a time, so that the block's best values and indices (6 KB in float) stay in L1.
  constexpr int64_t kBlock = 512;
  parallel_for(r.outer * r.inner, r.size, [&](int64_t begin, int64_t end) {
    std::vector<T> best;
    std::vector<int64_t> arg;
    for (int64_t p = begin; p < end;) {
      const int64_t o = p / r.inner, i0 = p % r.inner, i1 = std::min({r.inner, i0 + (end - p), i0 + kBlock});
      const int64_t width = i1 - i0;
      const T* first = x + o * r.size * r.inner + i0;
      best.assign(first, first + width);
      arg.assign(static_cast<size_t>(width), 0);
      for (int64_t k = 1; k < r.size; ++k) {
        const T* row = first + k * r.inner;
        for (int64_t i = 0; i < width; ++i) {
          const bool take = better<E>(row[i], best[i]);
          best[i] = take ? row[i] : best[i];
          arg[i] = take ? k : arg[i];
        }
      }
      if (values) std::copy(best.begin(), best.end(), values + p);
      if (indices) std::copy(arg.begin(), arg.end(), indices + p);
      p += width;
    }
  });
}

// What a value-selecting reduction returns: the extreme values, or their indices (int64).
enum class Want { Values, Indices };

// Runs extreme_kernel along `dim`.
template <Extreme E, Want W>
Tensor extreme_along(std::string_view op, const Tensor& x, int64_t dim, bool keepdim) {
  if (!x.defined()) throw ValueError(op, "the tensor is undefined");
  const int d = normalize_dim(op, dim, x.rank());
  if (x.shape()[d] == 0) throw ShapeError(op, "cannot reduce an empty dimension of shape " + x.shape().str());
  const Tensor c = x.contiguous();
  Tensor out =
      Tensor::empty(reduced_shape(x.shape(), d, d, keepdim), W == Want::Values ? x.dtype() : DType::Int64);
  dispatch_float(x.dtype(), op, [&]<typename T>() {
    extreme_kernel<E>(c.data_ptr<const T>(), W == Want::Values ? out.data_ptr<T>() : nullptr,
                      W == Want::Indices ? out.data_ptr<int64_t>() : nullptr, split_around(x.shape(), d, d));
  });
  return out;
}

// x as one dimension, for the reductions over the whole tensor.
Tensor flattened(std::string_view op, const Tensor& x) {
  if (!x.defined()) throw ValueError(op, "the tensor is undefined");
  return x.reshape({-1});
}

// Each element of x (any dtype) converted to double, in row-major order: for the whole-tensor queries.
std::vector<double> values_of(std::string_view op, const Tensor& x) {
  if (!x.defined()) throw ValueError(op, "the tensor is undefined");
  check_dense(op, x);
  return x.to_vector<double>();
}

}  // namespace

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  const std::vector<int> ds = normalize_dims("sum", x, dims);
  if (ds.empty()) return x.clone();
  if (ds.back() - ds.front() + 1 == static_cast<int>(ds.size())) {
    return sum_range(x, ds.front(), ds.back(), keepdim);  // adjacent dims: one pass
  }
  // Otherwise one run of adjacent dims at a time, from the innermost run outwards. keepdim holds every
  // dim in place, so the runs' dims mean the same in each pass.
  Tensor out = x;
  for (size_t last = ds.size(); last > 0;) {
    size_t first = last - 1;
    while (first > 0 && ds[first - 1] + 1 == ds[first]) --first;
    out = sum_range(out, ds[first], ds[last - 1], /*keepdim=*/true);
    last = first;
  }
  if (keepdim) return out;
  Shape kept;
  for (int d = 0; d < x.rank(); ++d)
    if (!std::binary_search(ds.begin(), ds.end(), d)) kept.push_back(x.shape()[d]);
  return out.reshape(kept);
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
  return extreme_along<Extreme::Max, Want::Values>("max", x, dim, keepdim);
}
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_along<Extreme::Max, Want::Indices>("argmax", x, dim, keepdim);
}
Tensor min(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_along<Extreme::Min, Want::Values>("min", x, dim, keepdim);
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_along<Extreme::Min, Want::Indices>("argmin", x, dim, keepdim);
}

Tensor max(const Tensor& x) {
  return max(flattened("max", x), 0, false);
}
Tensor argmax(const Tensor& x) {
  return argmax(flattened("argmax", x), 0, false);
}
Tensor min(const Tensor& x) {
  return min(flattened("min", x), 0, false);
}
Tensor argmin(const Tensor& x) {
  return argmin(flattened("argmin", x), 0, false);
}

namespace {

// max |x| over `dims`, one dimension at a time (the last first, so the others keep their numbers).
Tensor max_abs(const Tensor& x, const Shape& dims, bool keepdim) {
  std::vector<int64_t> order(dims.begin(), dims.end());
  for (int64_t& d : order) d = d < 0 ? d + x.rank() : d;
  std::sort(order.rbegin(), order.rend());
  Tensor out = abs(x);
  for (int64_t d : order) out = max(out, d, keepdim);
  return out;
}

}  // namespace

Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  if (!x.defined()) throw ValueError("norm", "the tensor is undefined");
  if (!is_floating(x.dtype())) {
    throw ValueError("norm", "takes a floating tensor, got " + std::string(dtype_name(x.dtype())));
  }
  if (!(p > 0)) throw ValueError("norm", "p must be positive (or inf), got " + std::to_string(p));
  if (std::isinf(p)) return max_abs(x, dims, keepdim);
  if (p == 1) return sum(abs(x), dims, keepdim);
  if (p == 2) return sqrt(sum(mul(x, x), dims, keepdim));
  return pow(sum(pow(abs(x), p), dims, keepdim), 1 / p);
}

Tensor norm(const Tensor& x, double p) {
  if (!x.defined()) throw ValueError("norm", "the tensor is undefined");
  Shape all_dims;
  for (int64_t d = 0; d < x.rank(); ++d) all_dims.push_back(d);
  return x.rank() == 0 ? norm(x.reshape({1}), p, {0}) : norm(x, p, all_dims);
}

bool all(const Tensor& x) {
  for (double v : values_of("all", x)) {
    if (v == 0) return false;  // NaN is not zero: true, as in PyTorch
  }
  return true;
}

bool any(const Tensor& x) {
  for (double v : values_of("any", x)) {
    if (v != 0) return true;
  }
  return false;
}

bool allclose(const Tensor& a, const Tensor& b, AllcloseOptions options) {
  if (!a.defined() || !b.defined()) throw ValueError("allclose", "an operand is undefined");
  if (a.dtype() != b.dtype()) {
    throw DTypeError("allclose", "the operands are " + std::string(dtype_name(a.dtype())) + " and " +
                                     std::string(dtype_name(b.dtype())) + "; convert one with .to()");
  }
  const Shape shape = broadcast_shapes("allclose", a.shape(), b.shape());
  const std::vector<double> x = values_of("allclose", a.expand(shape)),
                            y = values_of("allclose", b.expand(shape));
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      if (options.equal_nan && std::isnan(x[i]) && std::isnan(y[i])) continue;
      return false;
    }
    if (x[i] == y[i]) continue;                  // equal infinities too
    const double error = std::abs(x[i] - y[i]);  // infinite for unequal infinities: never close
    if (!(std::isfinite(error) && error <= options.atol + options.rtol * std::abs(y[i]))) return false;
  }
  return true;
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) throw ValueError("equal", "an operand is undefined");
  if (a.shape() != b.shape()) return false;
  const std::vector<double> x = values_of("equal", a), y = values_of("equal", b);
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] == y[i])) return false;  // false for NaN too
  }
  return true;
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

Tensor extreme_shares(const Tensor& x, const Tensor& value) {
  const Tensor hit =
      std::isnan(value.item()) ? ne(x, x) : eq(x, value);  // NaN is the one value not equal to itself
  const Tensor hits = hit.to(x.dtype());
  return div(hits, sum(hits));
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

#include "minigrad/tensor/shape.h"

#include <algorithm>
#include <ostream>

#include "minigrad/tensor/error.h"

namespace minigrad {

namespace {
void check_rank(int rank) {
  if (rank > Shape::kMaxRank) {
    throw ShapeError("shape", "tensors have at most " + std::to_string(Shape::kMaxRank) +
                                  " dimensions, got " + std::to_string(rank));
  }
}
}  // namespace

Shape::Shape(std::initializer_list<int64_t> dims)
    : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  check_rank(static_cast<int>(dims.size()));
  rank_ = static_cast<int>(dims.size());
  for (int i = 0; i < rank_; ++i) dims_[i] = dims[i];
}

Shape Shape::filled(int rank, int64_t value) {
  check_rank(rank);
  Shape shape;
  shape.rank_ = rank;
  for (int i = 0; i < rank; ++i) shape.dims_[i] = value;
  return shape;
}

void Shape::push_back(int64_t value) {
  insert(rank_, value);
}

void Shape::insert(int pos, int64_t value) {
  check_rank(rank_ + 1);
  for (int i = rank_; i > pos; --i) dims_[i] = dims_[i - 1];
  dims_[pos] = value;
  ++rank_;
}

void Shape::erase(int pos) {
  for (int i = pos; i + 1 < rank_; ++i) dims_[i] = dims_[i + 1];
  --rank_;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) {
    // A shape from outside (a file, a user's literal) may not fit; a tensor's own shape always does.
    if (__builtin_mul_overflow(n, dims_[i], &n)) {
      throw ShapeError("shape", "the element count of " + str() + " overflows 64 bits");
    }
  }
  return n;
}

bool Shape::operator==(const Shape& other) const {
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] != other.dims_[i]) return false;
  }
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ",";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  return os << shape.str();
}

int64_t checked_numel(std::string_view op, const Shape& shape, int64_t element_bytes) {
  int64_t numel = 1, span = element_bytes;  // span: the product with zeros counted as ones, in bytes
  bool has_zero = false;
  for (int64_t size : shape) {
    if (size < 0) throw ShapeError(op, "negative size in shape " + shape.str());
    if (size == 0) {
      has_zero = true;
    } else if (__builtin_mul_overflow(span, size, &span) || __builtin_mul_overflow(numel, size, &numel)) {
      throw ShapeError(op, "shape " + shape.str() + " is too large: its element count overflows 64 bits");
    }
  }
  return has_zero ? 0 : numel;
}

int64_t rows_of(std::string_view op, const Shape& shape) {
  const int leading = std::max(shape.rank() - 1, 0);
  return checked_numel(op, Shape(std::span<const int64_t>(shape.begin(), static_cast<size_t>(leading))));
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides = Shape::filled(shape.rank(), 1);
  for (int i = shape.rank() - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  if (a == b) return a;
  const int rank = std::max(a.rank(), b.rank());
  Shape out = Shape::filled(rank, 1);
  for (int i = 0; i < rank; ++i) {
    // Walk both shapes from the right; a missing dimension counts as size 1.
    const int ia = a.rank() - 1 - i, ib = b.rank() - 1 - i;
    const int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      throw ShapeError(op, "shapes " + a.str() + " and " + b.str() + " cannot be broadcast together (" +
                               std::to_string(sa) + " vs " + std::to_string(sb) + " at dim " +
                               std::to_string(-1 - i) + ")");
    }
    out[rank - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

int normalize_dim(std::string_view op, int64_t dim, int rank) {
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank) {
    throw ShapeError(
        op, "dim " + std::to_string(dim) + " is out of range for a tensor of rank " + std::to_string(rank));
  }
  return static_cast<int>(d);
}

Shape flattened_shape(std::string_view op, const Shape& shape, int64_t start_dim, int64_t end_dim) {
  if (shape.rank() == 0) return {1};
  const int start = normalize_dim(op, start_dim, shape.rank()),
            end = normalize_dim(op, end_dim, shape.rank());
  if (start > end) {
    throw ShapeError(op, "start_dim " + std::to_string(start_dim) + " comes after end_dim " +
                             std::to_string(end_dim) + " for shape " + shape.str());
  }
  Shape flat;
  for (int d = 0; d < start; ++d) flat.push_back(shape[d]);
  flat.push_back(split_around(shape, start, end).size);
  for (int d = end + 1; d < shape.rank(); ++d) flat.push_back(shape[d]);
  return flat;
}

AroundDims split_around(const Shape& shape, int first, int last) {
  AroundDims r;
  for (int d = 0; d < shape.rank(); ++d) (d < first ? r.outer : d <= last ? r.size : r.inner) *= shape[d];
  return r;
}

}  // namespace minigrad

// Shape: the sizes (or the strides) of a tensor's dimensions, held inline.
//
// A tensor has at most Shape::kMaxRank dimensions. Keeping the sizes in a fixed array rather than a
// std::vector means creating, copying or viewing a tensor allocates nothing for its shape, which is most
// of the cost of a tiny op.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

namespace minigrad {

class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  // A shape of `rank` dimensions, each `value`.
  static Shape filled(int rank, int64_t value);

  int rank() const { return rank_; }
  int size() const { return rank_; }
  bool empty() const { return rank_ == 0; }

  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  int64_t back() const { return dims_[rank_ - 1]; }

  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }
  int64_t* begin() { return dims_.data(); }
  int64_t* end() { return dims_.data() + rank_; }

  void push_back(int64_t value);
  void insert(int pos, int64_t value);
  void erase(int pos);

  // The product of the sizes; 1 for a rank-0 (scalar) shape. Throws ShapeError if it overflows.
  int64_t numel() const;

  bool operator==(const Shape& other) const;

  // "[2,3]": the form used in every error message.
  std::string str() const;

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);

// Row-major strides, in elements, for a contiguous tensor of this shape.
Shape contiguous_strides(const Shape& shape);

// The number of elements of a tensor of this shape whose elements take `element_bytes` bytes each, after
// checking that the shape can exist: no negative size, and neither the element count, nor any stride
// (the product of the sizes with zeros counted as ones: [0, 2^62, 2^62] has no element but a stride of
// 2^124), nor the byte count overflow. Throws ShapeError naming `op` and the shape otherwise. Every
// tensor constructor checks its shape with this before it allocates.
int64_t checked_numel(std::string_view op, const Shape& shape, int64_t element_bytes = 1);

// The rows a matrix op sees in a tensor of this shape, its last dimension the row: the product of every
// size but the last (1 for rank 0 or 1), checked as checked_numel. (2, 3, 4) -> 6; (2, 3, 0) -> 6, which
// reshape({-1, 0}) cannot infer.
int64_t rows_of(std::string_view op, const Shape& shape);

// NumPy broadcasting: align from the right; each pair of sizes must be equal or one of them 1.
// Throws ShapeError naming `op` and both shapes.
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

// Maps a possibly negative dim (-1 is the last) into [0, rank); throws ShapeError naming `op` otherwise.
int normalize_dim(std::string_view op, int64_t dim, int rank);

// A contiguous shape viewed as [outer, size, inner] around the run of dimensions first..last: element
// (o, k, i) sits at (o·size + k)·inner + i. Reductions, softmax and indexing along a dimension all loop
// over this layout.
struct AroundDims {
  int64_t outer = 1, size = 1, inner = 1;
};
AroundDims split_around(const Shape& shape, int first, int last);
inline AroundDims split_around(const Shape& shape, int dim) {
  return split_around(shape, dim, dim);
}

// The shape flatten(start_dim, end_dim) gives: dimensions start_dim..end_dim merged into one; a scalar
// becomes [1], as torch.flatten's. Throws ShapeError naming `op` for a dim out of range or start after end.
Shape flattened_shape(std::string_view op, const Shape& shape, int64_t start_dim, int64_t end_dim);

}  // namespace minigrad

// Tensor's views: a new shape and strides over the same storage, no element copied (reshape copies only
// when no strides can express the new shape).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

namespace {

// Replaces a single -1 in `shape` by the size that makes it hold `numel` elements.
Shape infer_shape(std::string_view op, const Shape& from, Shape shape) {
  int inferred = -1;
  int64_t known = 1;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == -1) {
      if (inferred >= 0) throw ShapeError(op, "only one dimension can be -1, got " + shape.str());
      inferred = d;
    } else if (shape[d] < 0) {
      throw ShapeError(op, "invalid size in shape " + shape.str());
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {
      throw ShapeError(op, "shape " + shape.str() + " is too large: its element count overflows 64 bits");
    }
  }
  const int64_t numel = from.numel();
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) {
      throw ShapeError(op, "shape " + shape.str() + " is invalid for input of shape " + from.str());
    }
    shape[inferred] = numel / known;
  }
  if (checked_numel(op, shape) != numel) {
    throw ShapeError(op, "shape " + shape.str() + " is invalid for input of shape " + from.str() + " (" +
                             std::to_string(shape.numel()) + " != " + std::to_string(numel) + " elements)");
  }
  return shape;
}

// Strides that let a tensor of (shape, strides) be read as `target` without copying, if any exist.
// The old dimensions are split into chunks that are contiguous among themselves; each chunk must be
// re-cut into whole target dimensions. This is PyTorch's computeStride.
std::optional<Shape> view_strides(const Shape& shape, const Shape& strides, const Shape& target) {
  if (shape.numel() == 0) return contiguous_strides(target);
  Shape out = Shape::filled(target.rank(), 1);
  int view_d = target.rank() - 1;
  int64_t chunk_base_stride = shape.rank() ? strides.back() : 1;
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    const bool chunk_ends =
        d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
      out[view_d] = view_numel * chunk_base_stride;
      view_numel *= target[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = strides[d - 1];
      tensor_numel = view_numel = 1;
    }
  }
  // Leftover target dimensions can only be 1s (e.g. viewing a scalar as [1,1]).
  for (; view_d >= 0; --view_d) {
    if (target[view_d] != 1) return std::nullopt;
    out[view_d] = 1;
  }
  return out;
}

}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  check_defined("view");
  const Shape target = infer_shape("view", shape_, shape);
  if (is_contiguous()) return with_layout(target, contiguous_strides(target), offset_);
  auto strides = view_strides(shape_, strides_, target);
  if (!strides) {
    throw ShapeError("view", "a tensor of shape " + shape_.str() + " with strides " + strides_.str() +
                                 " cannot be viewed as " + target.str() + " without a copy; use reshape()");
  }
  return with_layout(target, *strides, offset_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  check_defined("reshape");
  const Shape target = infer_shape("reshape", shape_, shape);
  if (is_contiguous()) return with_layout(target, contiguous_strides(target), offset_);
  if (auto strides = view_strides(shape_, strides_, target)) return with_layout(target, *strides, offset_);
  return contiguous().view(target);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  check_defined("transpose");
  const int a = normalize_dim("transpose", dim0, rank()), b = normalize_dim("transpose", dim1, rank());
  Shape shape = shape_, strides = strides_;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::t() const {
  if (rank() != 2) throw ShapeError("t", "expects a 2-D tensor, got shape " + shape_.str());
  return transpose(0, 1);
}

Tensor Tensor::permute(const Shape& dims) const {
  check_defined("permute");
  if (dims.rank() != rank()) {
    throw ShapeError("permute", "dims " + dims.str() + " do not match a tensor of shape " + shape_.str());
  }
  Shape shape = shape_, strides = strides_;
  std::array<bool, Shape::kMaxRank> seen{};
  for (int i = 0; i < rank(); ++i) {
    const int d = normalize_dim("permute", dims[i], rank());
    if (seen[d]) throw ShapeError("permute", "dims " + dims.str() + " repeat dimension " + std::to_string(d));
    seen[d] = true;
    shape[i] = shape_[d];
    strides[i] = strides_[d];
  }
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  check_defined("slice");
  const int d = normalize_dim("slice", dim, rank());
  if (step <= 0) throw ValueError("slice", "step must be positive, got " + std::to_string(step));
  const int64_t size = shape_[d];
  // Python's rules: negative bounds count from the end, then both are clamped into [0, size].
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape shape = shape_, strides = strides_;
  shape[d] = (end - start + step - 1) / step;
  strides[d] = strides_[d] * step;
  return with_layout(shape, strides, offset_ + start * strides_[d]);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  check_defined("select");
  const int d = normalize_dim("select", dim, rank());
  if (index < -shape_[d] || index >= shape_[d]) {
    throw IndexError("select", "index " + std::to_string(index) + " is out of range for dimension " +
                                   std::to_string(d) + " of shape " + shape_.str());
  }
  if (index < 0) index += shape_[d];
  Shape shape = shape_, strides = strides_;
  shape.erase(d);
  strides.erase(d);
  return with_layout(shape, strides, offset_ + index * strides_[d]);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  check_defined("unsqueeze");
  const int d = normalize_dim("unsqueeze", dim, rank() + 1);
  Shape shape = shape_, strides = strides_;
  // The new dimension's stride is never stepped; any value works, this one keeps is_contiguous simple.
  shape.insert(d, 1);
  strides.insert(d, d < rank() ? strides_[d] * shape_[d] : 1);
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::squeeze(int64_t dim) const {
  check_defined("squeeze");
  const int d = normalize_dim("squeeze", dim, rank());
  if (shape_[d] != 1) {
    throw ShapeError("squeeze", "dimension " + std::to_string(d) + " of shape " + shape_.str() + " is not 1");
  }
  Shape shape = shape_, strides = strides_;
  shape.erase(d);
  strides.erase(d);
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::expand(const Shape& target) const {
  check_defined("expand");
  if (target.rank() < rank()) {
    throw ShapeError("expand",
                     "cannot expand shape " + shape_.str() + " to fewer dimensions " + target.str());
  }
  Shape shape = target, strides = Shape::filled(target.rank(), 0);
  const int lead = target.rank() - rank();
  for (int d = 0; d < target.rank(); ++d) {
    if (d < lead) {
      if (target[d] < 0) throw ShapeError("expand", "-1 is not allowed for new leading dimensions");
      continue;
    }
    const int64_t have = shape_[d - lead];
    if (target[d] == -1 || target[d] == have) {
      shape[d] = have;
      strides[d] = strides_[d - lead];
    } else if (have != 1) {
      throw ShapeError("expand", "cannot expand shape " + shape_.str() + " to " + target.str());
    }
  }
  checked_numel("expand", shape);  // broadcast dimensions take no memory, but their count must fit
  return with_layout(shape, strides, offset_);
}

}  // namespace minigrad

// Tensor: a dense, row-major, n-dimensional array of float32, float64, int64 or bool.
//
// A Tensor is a handle: copying it copies the shape and strides and shares the buffer (Storage), like a
// torch.Tensor. Views — reshape, transpose, permute, slice, expand — are new handles on the same buffer
// with other strides; nothing is copied until contiguous() or clone() asks for it.
//
// This layer knows nothing about gradients. The math on tensors lives in the neighbouring headers:
// elementwise.h, reduce.h, matmul.h, softmax.h, index.h; tensor/ops.h includes them all.
//
//   Tensor x = Tensor::arange(0, 6).reshape({2, 3});   // [[0,1,2],[3,4,5]]
//   Tensor y = x.transpose(0, 1);                       // shape [3,2], same buffer
//   std::cout << y.contiguous() << "\n";
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "minigrad/tensor/dtype.h"
#include "minigrad/tensor/error.h"
#include "minigrad/tensor/methods.h"
#include "minigrad/tensor/random.h"
#include "minigrad/tensor/shape.h"
#include "minigrad/tensor/storage.h"

namespace minigrad {

struct RowSparse;  // tensor/row_sparse.h
class Tensor;
[[noreturn]] void throw_not_dense(std::string_view op, const Tensor& t);

class Tensor : public Methods<Tensor> {  // x.sum(), x.norm(), x == y ...: tensor/methods.h
 public:
  // An undefined tensor: no buffer, no shape. Used for "no gradient yet".
  Tensor() = default;

  // ---- creation ----
  // Uninitialized memory: for outputs every element of which a kernel is about to write.
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32);
  static Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
  static Tensor ones(const Shape& shape, DType dtype = DType::Float32);
  static Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);
  // A rank-0 tensor holding one value.
  static Tensor scalar(double value, DType dtype = DType::Float32);
  // start, start + step, ... up to but excluding end, as NumPy's arange.
  static Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::Float32);
  static Tensor arange(int64_t end, DType dtype = DType::Int64) { return arange(0, double(end), 1, dtype); }
  // Copies values into a new tensor of the given shape; the dtype follows T (float, double, int64_t, bool).
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  // A braced list, as torch.tensor([1, 2, 3]) is written: from_vector({1, 2, 3}, {3}). Whole numbers
  // give int64, floating ones their own dtype (float32 or float64), bools bool.
  template <typename T>
  static Tensor from_vector(std::initializer_list<T> values, const Shape& shape) {
    using Element = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int64_t, T>;
    return from_vector(std::vector<Element>(values.begin(), values.end()), shape);
  }
  // Converts the values to `dtype`; the usual way to write small literal tensors in tests and examples.
  static Tensor from_values(std::span<const double> values, const Shape& shape, DType dtype = DType::Float32);
  static Tensor from_values(std::initializer_list<double> values, const Shape& shape,
                            DType dtype = DType::Float32) {
    return from_values(std::span<const double>(values.begin(), values.size()), shape, dtype);
  }
  // Independent draws from `generator` (default: the global one) in row-major order.
  static Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0, DType dtype = DType::Float32,
                        Generator* generator = nullptr);
  static Tensor normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
                       DType dtype = DType::Float32, Generator* generator = nullptr);
  // True with probability p, as a bool tensor.
  static Tensor bernoulli(const Shape& shape, double p, Generator* generator = nullptr);

  // ---- what it is ----
  bool defined() const { return storage_ != nullptr || sparse_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  // Strides in elements, not bytes; 0 in a dimension that was broadcast by expand().
  const Shape& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int rank() const { return shape_.rank(); }
  int64_t numel() const { return shape_.numel(); }
  // The size of one dimension; negative dims count from the end.
  int64_t size(int64_t dim) const;
  bool is_contiguous() const;

  // The first element, typed. Throws DTypeError if T is not this tensor's element type.
  template <typename T>
  T* data_ptr() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  bool shares_storage_with(const Tensor& other) const { return storage_ && storage_ == other.storage_; }

  // The storage's in-place write counter (see Storage::version).
  uint64_t version() const;
  // Whether this is the only handle on its buffer (row-sparse: on its rows) and spans all of it, so that
  // whoever holds it may keep it as its own without a copy (what a leaf does with a fresh gradient).
  bool owns_its_buffer() const;

  // ---- the row-sparse layout (tensor/row_sparse.h): a sparse embedding's gradient ----
  // A (V, D) tensor that holds only some rows, every other row zero: PyTorch's sparse layout, for tables.
  // It has a shape and a dtype but no dense buffer: data_ptr, views and the dense kernels refuse it, and
  // to_dense() gives the dense tensor. add() and add_() take it; optimizers ask is_row_sparse().
  static Tensor row_sparse(Tensor indices, Tensor values, const Shape& dense_shape);
  bool is_row_sparse() const { return sparse_ != nullptr; }
  const Tensor& row_indices() const;  // (K) int64, sorted ascending, each row once
  const Tensor& row_values() const;   // (K, D) contiguous: row k is row row_indices()[k] of the tensor
  // The dense tensor: this one if it is dense, else zeros with the rows in place (a (V, D) buffer).
  Tensor to_dense() const;

  // The value of a one-element tensor, converted to double.
  double item() const;
  // One element, converted to double: x.at({1, 2}).
  double at(std::initializer_list<int64_t> index) const;
  // All elements in row-major order, converted to T.
  template <typename T = double>
  std::vector<T> to_vector() const;

  // ---- views: new handles on the same storage ----
  // A view with a new shape, one dim of which may be -1 (inferred). Throws if the strides make that
  // impossible without a copy; reshape() then copies.
  Tensor view(const Shape& shape) const;
  // view() when the strides allow it, otherwise a contiguous copy: reshape never fails for a valid size.
  Tensor reshape(const Shape& shape) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  // The transpose of a 2-D tensor.
  Tensor t() const;
  // Dimension i of the result is dimension dims[i] of this tensor.
  Tensor permute(const Shape& dims) const;
  // Elements start, start + step, ... < end along `dim`. Negative start/end count from the end and are
  // clamped to the dimension, as Python slices; step must be positive.
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  // The sub-tensor at `index` along `dim`, with that dimension removed.
  Tensor select(int64_t dim, int64_t index) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  // Broadcasts size-1 dimensions (and new leading ones) to `shape` with stride 0; -1 keeps a size.
  Tensor expand(const Shape& shape) const;

  // ---- copies ----
  // This tensor if already contiguous, otherwise a contiguous copy.
  Tensor contiguous() const;
  // Always a new contiguous buffer with the same values.
  Tensor clone() const;
  // The values converted to `dtype` (a copy, or this tensor if it already has that dtype).
  Tensor to(DType dtype) const;

  // ---- in place: these write into the storage and bump its version ----
  // They are const, like ATen's: constness belongs to the handle, the buffer is shared anyway.
  const Tensor& fill_(double value) const;
  const Tensor& zero_() const { return fill_(0.0); }
  // Copies (and converts) `src`, which must broadcast to this tensor's shape.
  const Tensor& copy_(const Tensor& src) const;
  // this += alpha * other; `other` must broadcast to this tensor's shape.
  const Tensor& add_(const Tensor& other, double alpha = 1.0) const;
  const Tensor& mul_(double factor) const;
  const Tensor& mul_(const Tensor& other) const;
  // Sets the elements where `mask` (bool, broadcast to this shape) is true.
  const Tensor& masked_fill_(const Tensor& mask, double value) const;
  // Marks the storage as written; for code that writes through data_ptr() directly.
  void bump_version() const;

 private:
  Tensor(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides, int64_t offset,
         DType dtype);
  // A view of the same storage with other metadata.
  Tensor with_layout(const Shape& shape, const Shape& strides, int64_t offset) const;
  // Throws, naming `op`, unless this tensor is defined and dense (check_dense).
  void check_defined(std::string_view op) const {
    if (!storage_) [[unlikely]]
      throw_not_dense(op, *this);
  }

  std::shared_ptr<Storage> storage_;
  std::shared_ptr<const RowSparse> sparse_;  // set for the row-sparse layout, which has no storage_
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::Float32;
};

// Prints like PyTorch: tensor([[1.0000, 2.0000], ...], shape=[2,2], dtype=float32), eliding the middle
// of big tensors.
std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

// "[3,2] float64": a shape and dtype for error messages and graph labels.
inline std::string describe(const Shape& shape, DType dtype) {
  return shape.str() + " " + std::string(dtype_name(dtype));
}

// Throws, naming `op`, unless `t` is defined and dense: a kernel's first check of an operand, so that a
// row-sparse gradient handed to a dense kernel is told to call to_dense().
inline void check_dense(std::string_view op, const Tensor& t) {
  if (!t.defined() || t.is_row_sparse()) [[unlikely]]
    throw_not_dense(op, t);
}
// Throws DTypeError "OP: WHAT must be EXPECTED, got ACTUAL" unless `t` has dtype `expected`; `what`
// names the operand ("the mask", "the token ids").
void check_dtype(std::string_view op, std::string_view what, const Tensor& t, DType expected);
// The end of a dtype error: how to convert, e.g. "; convert with .to(DType::Float32)". `have` are the
// operands' dtypes; the suggested target is `want` if given, else the first float among them, else float32.
std::string conversion_hint(std::initializer_list<DType> have, std::optional<DType> want = std::nullopt);

// The view methods as free functions, so that a backward function can be written once for Tensors and
// for Variables (autograd/functions.h has the same names for Variables).
inline Tensor reshape(const Tensor& x, const Shape& shape) {
  return x.reshape(shape);
}
inline Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  return x.transpose(dim0, dim1);
}
inline Tensor permute(const Tensor& x, const Shape& dims) {
  return x.permute(dims);
}
inline Tensor expand(const Tensor& x, const Shape& shape) {
  return x.expand(shape);
}
inline Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1) {
  return x.slice(dim, start, end, step);
}
// Dimensions start_dim..end_dim as one (x.flatten(): all of them), a view where the strides allow it.
inline Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1) {
  return x.reshape(flattened_shape("flatten", x.shape(), start_dim, end_dim));
}

// The storage offsets of t's elements, in row-major order of their logical index (what gradcheck
// perturbs one by one).
std::vector<int64_t> element_offsets(const Tensor& t);

// Joins tensors along `dim`; every other dimension must agree. PyTorch's torch.cat, under both its names.
Tensor concat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// concat({a, b}, 0) of Tensors: the Tensor op, where a braced list could also make a vector of Variables
// (a Tensor converts to a Variable).
inline Tensor concat(std::initializer_list<Tensor> tensors, int64_t dim = 0) {
  return concat(std::vector<Tensor>(tensors), dim);
}
inline Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0) {
  return concat(tensors, dim);
}
inline Tensor cat(std::initializer_list<Tensor> tensors, int64_t dim = 0) {
  return concat(std::vector<Tensor>(tensors), dim);
}

// New tensors of t's shape and dtype (contiguous, whatever t's strides), as PyTorch's *_like: zeros, ones,
// `value`, uniform in [0, 1) and standard normal draws (from `generator`, default the thread's).
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
Tensor rand_like(const Tensor& t, Generator* generator = nullptr);
Tensor randn_like(const Tensor& t, Generator* generator = nullptr);

// ---- templates ----

template <typename T>
T* Tensor::data_ptr() const {
  check_defined("data_ptr");
  if (dtype_of<std::remove_const_t<T>>() != dtype_) {
    throw DTypeError("data_ptr", "asked for " + std::string(dtype_name(dtype_of<std::remove_const_t<T>>())) +
                                     " elements of a " + std::string(dtype_name(dtype_)) + " tensor");
  }
  return static_cast<T*>(storage_->data()) + offset_;
}

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw ShapeError("from_vector",
                     std::to_string(values.size()) + " values do not fill shape " + shape.str());
  }
  Tensor out = empty(shape, dtype_of<T>());
  T* p = out.data_ptr<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return out;
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  const Tensor c = contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  dispatch_all(dtype_, [&]<typename S>() {
    const S* p = c.data_ptr<S>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(p[i]);
  });
  return out;
}

}  // namespace minigrad

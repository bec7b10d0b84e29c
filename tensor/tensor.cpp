#include "minigrad/tensor/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>
#include <optional>

#include "minigrad/tensor/map.h"
#include "minigrad/tensor/row_sparse.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

// ---------------------------------------------------------------------------------------------------
// construction

Tensor::Tensor(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides, int64_t offset,
               DType dtype)
    : storage_(std::move(storage)), shape_(shape), strides_(strides), offset_(offset), dtype_(dtype) {}

Tensor Tensor::with_layout(const Shape& shape, const Shape& strides, int64_t offset) const {
  return Tensor(storage_, shape, strides, offset, dtype_);
}

void check_dtype(std::string_view op, std::string_view what, const Tensor& t, DType expected) {
  if (t.dtype() == expected) return;
  throw DTypeError(op, std::string(what) + " must be " + std::string(dtype_name(expected)) + ", got " +
                           std::string(dtype_name(t.dtype())) + conversion_hint({t.dtype()}, expected));
}

std::string conversion_hint(std::initializer_list<DType> have, std::optional<DType> want) {
  if (!want) {
    for (DType d : have) {
      if (is_floating(d)) {
        want = d;
        break;
      }
    }
  }
  const DType target = want.value_or(DType::Float32);
  const char* spelled = target == DType::Float32   ? "Float32"
                        : target == DType::Float64 ? "Float64"
                        : target == DType::Int64   ? "Int64"
                                                   : "Bool";
  return std::string("; convert with .to(DType::") + spelled + ")";
}

void throw_not_dense(std::string_view op, const Tensor& t) {
  if (!t.defined())
    throw ValueError(op, "the tensor is undefined (default-constructed, or a missing gradient)");
  throw ValueError(op,
                   "the tensor is row-sparse (a sparse embedding's gradient) and has no dense buffer; "
                   "call to_dense() first");
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  const int64_t numel = checked_numel("tensor", shape, static_cast<int64_t>(element_size(dtype)));
  const size_t bytes = static_cast<size_t>(numel) * element_size(dtype);
  std::shared_ptr<Storage> storage;
  try {
    storage = std::make_shared<Storage>(bytes);
  } catch (const std::bad_alloc&) {
    throw Error("tensor", "cannot allocate " + std::to_string(bytes) + " bytes for a " +
                              std::string(dtype_name(dtype)) + " tensor of shape " + shape.str());
  }
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor out = empty(shape, dtype);
  // All-zero bytes are 0 for every dtype, including IEEE 0.0. Two cores clear a large buffer faster than
  // one (an embedding table's dense gradient: 5 MB on bench/train-step.sh's B), so it is split between the
  // threads at 4 KB boundaries, each 4 KB counted as 256 items of parallel_for's grain: two threads from
  // 1 MB up, since at 256 KB the split was slower (docs/history/performance.md, "A step's kernels").
  constexpr int64_t kPiece = 4096;
  auto* bytes = static_cast<std::byte*>(out.storage_->data());
  const int64_t nbytes = static_cast<int64_t>(out.storage_->nbytes());
  parallel_for((nbytes + kPiece - 1) / kPiece, 256, [&](int64_t begin, int64_t end) {
    std::memset(bytes + begin * kPiece, 0, std::min(end * kPiece, nbytes) - begin * kPiece);
  });
  return out;
}

Tensor Tensor::ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  Tensor out = empty(shape, dtype);
  out.fill_(value);
  return out;
}

Tensor Tensor::scalar(double value, DType dtype) {
  return full(Shape{}, value, dtype);
}

Tensor Tensor::arange(double start, double end, double step, DType dtype) {
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(end)) {
    throw ValueError("arange", "start, end and step must be finite and step non-zero");
  }
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((end - start) / step)));
  Tensor out = empty({n}, dtype);
  dispatch_numeric(dtype, "arange", [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return out;
}

Tensor Tensor::from_values(std::span<const double> values, const Shape& shape, DType dtype) {
  if (static_cast<int64_t>(values.size()) != shape.numel()) {
    throw ShapeError("from_values",
                     std::to_string(values.size()) + " values do not fill shape " + shape.str());
  }
  Tensor out = empty(shape, dtype);
  dispatch_all(dtype, [&]<typename T>() {
    T* p = out.data_ptr<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
  });
  return out;
}

Tensor Tensor::uniform(const Shape& shape, double low, double high, DType dtype, Generator* generator) {
  if (!(low <= high)) throw ValueError("uniform", "low must not exceed high");
  Generator& g = generator ? *generator : default_generator();
  Tensor out = empty(shape, dtype);
  dispatch_float(dtype, "uniform", [&]<typename T>() {
    T* p = out.data_ptr<T>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(low + (high - low) * g.next_double());
  });
  return out;
}

Tensor Tensor::normal(const Shape& shape, double mean, double stddev, DType dtype, Generator* generator) {
  if (!(stddev >= 0)) throw ValueError("normal", "stddev must be non-negative");
  Generator& g = generator ? *generator : default_generator();
  Tensor out = empty(shape, dtype);
  dispatch_float(dtype, "normal", [&]<typename T>() {
    T* p = out.data_ptr<T>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(mean + stddev * g.next_normal());
  });
  return out;
}

Tensor Tensor::bernoulli(const Shape& shape, double p, Generator* generator) {
  if (!(p >= 0 && p <= 1)) throw ValueError("bernoulli", "p must be in [0, 1], got " + std::to_string(p));
  Generator& g = generator ? *generator : default_generator();
  Tensor out = empty(shape, DType::Bool);
  bool* q = out.data_ptr<bool>();
  const int64_t n = out.numel();
  // Two draws per 64-bit word, each a 32-bit uniform integer compared with p·2^32: dropout masks for
  // attention weights run to millions of draws per step, on one thread so that the seed fixes them.
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(p, 32));  // p = 1 gives 2^32: always true
  for (int64_t i = 0; i < n; i += 2) {
    const uint64_t bits = g.next_u64();
    q[i] = (bits & 0xffffffffu) < threshold;
    if (i + 1 < n) q[i + 1] = (bits >> 32) < threshold;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// inspection

int64_t Tensor::size(int64_t dim) const {
  return shape_[normalize_dim("size", dim, rank())];
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int d = rank() - 1; d >= 0; --d) {
    if (shape_[d] == 1) continue;  // the stride of a size-1 dimension is never used
    if (strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

bool Tensor::owns_its_buffer() const {
  if (sparse_) return sparse_.use_count() == 1;
  return storage_ && storage_.use_count() == 1 && is_contiguous() && offset_ == 0 &&
         static_cast<size_t>(numel()) * element_size(dtype_) == storage_->nbytes();
}

uint64_t Tensor::version() const {
  check_defined("version");
  return storage_->version();
}

void Tensor::bump_version() const {
  check_defined("bump_version");
  storage_->bump_version();
}

double Tensor::item() const {
  check_defined("item");
  if (numel() != 1) {
    throw ValueError(
        "item", "a tensor of shape " + shape_.str() + " has " + std::to_string(numel()) + " elements, not 1");
  }
  return dispatch_all(dtype_, [&]<typename T>() { return static_cast<double>(*data_ptr<T>()); });
}

double Tensor::at(std::initializer_list<int64_t> index) const {
  check_defined("at");
  if (static_cast<int>(index.size()) != rank()) {
    throw IndexError("at", std::to_string(index.size()) + " indices for a tensor of shape " + shape_.str());
  }
  int64_t offset = 0;
  int d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_[d]) {
      throw IndexError("at", "index " + std::to_string(i) + " is out of range for dimension " +
                                 std::to_string(d) + " of shape " + shape_.str());
    }
    offset += i * strides_[d++];
  }
  return dispatch_all(dtype_, [&]<typename T>() { return static_cast<double>(data_ptr<T>()[offset]); });
}

// ---------------------------------------------------------------------------------------------------
// copies

Tensor Tensor::contiguous() const {
  check_defined("contiguous");
  return is_contiguous() ? *this : clone();
}

Tensor Tensor::clone() const {
  if (sparse_) return row_sparse(sparse_->indices.clone(), sparse_->values.clone(), shape_);
  check_defined("clone");
  Tensor out = empty(shape_, dtype_);
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_ && defined()) return *this;
  if (sparse_) return row_sparse(sparse_->indices, sparse_->values.to(dtype), shape_);
  check_defined("to");
  Tensor out = empty(shape_, dtype);
  out.copy_(*this);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// in place

namespace {
void check_broadcasts_to(std::string_view op, const Tensor& src, const Shape& dst) {
  if (broadcast_shapes(op, src.shape(), dst) != dst) {
    throw ShapeError(op, "shape " + src.shape().str() + " does not broadcast to " + dst.str());
  }
}
}  // namespace

const Tensor& Tensor::fill_(double value) const {
  check_defined("fill_");
  dispatch_all(dtype_, [&]<typename T>() {
    const T v = static_cast<T>(value);
    const auto plan = make_loop_plan<1>(shape_, {strides_});
    T* p = data_ptr<T>();
    const int64_t s = plan.strides[0].back();
    for_each_run(plan, [&](int64_t n, const std::array<int64_t, 1>& off) {
      for (int64_t i = 0; i < n; ++i) p[off[0] + i * s] = v;
    });
  });
  bump_version();
  return *this;
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  check_defined("copy_");
  src.check_defined("copy_");
  check_broadcasts_to("copy_", src, shape_);
  const auto plan = make_loop_plan<2>(shape_, {strides_, broadcast_strides(src, shape_)});
  dispatch_all(dtype_, [&]<typename D>() {
    dispatch_all(src.dtype(), [&]<typename S>() {
      run_unary(plan, data_ptr<D>(), src.data_ptr<const S>(), [](S v) { return static_cast<D>(v); });
    });
  });
  bump_version();
  return *this;
}

const Tensor& Tensor::add_(const Tensor& other, double alpha) const {
  if (other.is_row_sparse()) {  // into the rows it has
    add_rows_into(*this, other, alpha);
    return *this;
  }
  check_defined("add_");
  check_float_pair("add_", *this, other);
  check_broadcasts_to("add_", other, shape_);
  dispatch_float(dtype_, "add_", [&]<typename T>() {
    const T a = static_cast<T>(alpha);
    const auto plan = make_loop_plan<3>(shape_, {strides_, strides_, broadcast_strides(other, shape_)});
    run_binary(plan, data_ptr<T>(), data_ptr<const T>(), other.data_ptr<const T>(),
               [a](T x, T y) { return x + a * y; });
  });
  bump_version();
  return *this;
}

const Tensor& Tensor::mul_(double factor) const {
  if (sparse_) {  // the rows absent stay zero
    sparse_->values.mul_(factor);
    return *this;
  }
  check_defined("mul_");
  dispatch_float(dtype_, "mul_", [&]<typename T>() {
    const T f = static_cast<T>(factor);
    const auto plan = make_loop_plan<2>(shape_, {strides_, strides_});
    run_unary(plan, data_ptr<T>(), data_ptr<const T>(), [f](T x) { return x * f; });
  });
  bump_version();
  return *this;
}

const Tensor& Tensor::mul_(const Tensor& other) const {
  check_defined("mul_");
  check_float_pair("mul_", *this, other);
  check_broadcasts_to("mul_", other, shape_);
  dispatch_float(dtype_, "mul_", [&]<typename T>() {
    const auto plan = make_loop_plan<3>(shape_, {strides_, strides_, broadcast_strides(other, shape_)});
    run_binary(plan, data_ptr<T>(), data_ptr<const T>(), other.data_ptr<const T>(),
               [](T x, T y) { return x * y; });
  });
  bump_version();
  return *this;
}

const Tensor& Tensor::masked_fill_(const Tensor& mask, double value) const {
  check_defined("masked_fill_");
  check_dtype("masked_fill_", "the mask", mask, DType::Bool);
  check_broadcasts_to("masked_fill_", mask, shape_);
  dispatch_all(dtype_, [&]<typename T>() {
    const T v = static_cast<T>(value);
    const auto plan = make_loop_plan<3>(shape_, {strides_, strides_, broadcast_strides(mask, shape_)});
    run_binary(plan, data_ptr<T>(), data_ptr<const T>(), mask.data_ptr<const bool>(),
               [v](T x, bool m) { return m ? v : x; });
  });
  bump_version();
  return *this;
}

// ---------------------------------------------------------------------------------------------------
// *_like

namespace {
// The shape and dtype a *_like function copies: refuses an undefined tensor, which has neither.
const Tensor& like(const Tensor& t, const char* op) {
  if (!t.defined()) throw ValueError(op, "the tensor is undefined");
  return t;
}
}  // namespace

Tensor zeros_like(const Tensor& t) {
  return Tensor::zeros(like(t, "zeros_like").shape(), t.dtype());
}
Tensor ones_like(const Tensor& t) {
  return Tensor::ones(like(t, "ones_like").shape(), t.dtype());
}
Tensor full_like(const Tensor& t, double value) {
  return Tensor::full(like(t, "full_like").shape(), value, t.dtype());
}
Tensor rand_like(const Tensor& t, Generator* generator) {
  return Tensor::uniform(like(t, "rand_like").shape(), 0.0, 1.0, t.dtype(), generator);
}
Tensor randn_like(const Tensor& t, Generator* generator) {
  return Tensor::normal(like(t, "randn_like").shape(), 0.0, 1.0, t.dtype(), generator);
}

// ---------------------------------------------------------------------------------------------------
// concat

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw ValueError("concat", "needs at least one tensor");
  const Tensor& first = tensors.front();
  if (!first.defined()) throw ValueError("concat", "tensor 0 is undefined");
  const int d = normalize_dim("concat", dim, first.rank());
  Shape shape = first.shape();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) throw ValueError("concat", "tensor " + std::to_string(i) + " is undefined");
    if (t.dtype() != first.dtype()) {
      throw DTypeError("concat", "tensor " + std::to_string(i) + " is " + std::string(dtype_name(t.dtype())) +
                                     ", tensor 0 is " + std::string(dtype_name(first.dtype())));
    }
    bool fits = t.rank() == first.rank();
    for (int k = 0; fits && k < t.rank(); ++k) fits = k == d || t.shape()[k] == first.shape()[k];
    if (!fits) {
      throw ShapeError("concat", "shapes " + first.shape().str() + " and " + t.shape().str() +
                                     " differ outside dimension " + std::to_string(d));
    }
    shape[d] += t.shape()[d];
  }
  Tensor out = Tensor::empty(shape, first.dtype());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    out.slice(d, at, at + t.shape()[d]).copy_(t);
    at += t.shape()[d];
  }
  return out;
}

// Storage offsets of a tensor's elements, in row-major order of its logical index.
std::vector<int64_t> element_offsets(const Tensor& t) {
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(t.numel()));
  Shape index = Shape::filled(t.rank(), 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t offset = t.offset();
    for (int d = 0; d < t.rank(); ++d) offset += index[d] * t.strides()[d];
    offsets.push_back(offset);
    for (int d = t.rank() - 1; d >= 0 && ++index[d] == t.shape()[d]; --d) index[d] = 0;
  }
  return offsets;
}

}  // namespace minigrad

// Variable's methods for the common ops: each calls the differentiable function of the same name
// (autograd/functions.h), so x.reshape(s) and reshape(x, s) record the same node. The reductions,
// comparisons, flatten and masked_fill it shares with Tensor are declared once, in tensor/methods.h.
#include "minigrad/autograd/functions.h"

namespace minigrad {

Variable Variable::reshape(const Shape& shape) const {
  return minigrad::reshape(*this, shape);
}
Variable Variable::view(const Shape& shape) const {
  return minigrad::reshape(*this, shape);
}
Variable Variable::transpose(int64_t dim0, int64_t dim1) const {
  return minigrad::transpose(*this, dim0, dim1);
}
Variable Variable::t() const {
  if (rank() != 2) throw ShapeError("t", "expects a matrix, got shape " + shape().str());
  return minigrad::transpose(*this, 0, 1);
}
Variable Variable::permute(const Shape& dims) const {
  return minigrad::permute(*this, dims);
}
Variable Variable::unsqueeze(int64_t dim) const {
  return minigrad::unsqueeze(*this, dim);
}
Variable Variable::squeeze(int64_t dim) const {
  return minigrad::squeeze(*this, dim);
}
Variable Variable::expand(const Shape& shape) const {
  return minigrad::expand(*this, shape);
}
Variable Variable::select(int64_t dim, int64_t index) const {
  return minigrad::select(*this, dim, index);
}
Variable Variable::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  return minigrad::slice(*this, dim, start, end, step);
}
Variable Variable::to(DType dtype) const {
  return minigrad::to(*this, dtype);
}
Variable Variable::matmul(const Variable& other) const {
  return minigrad::matmul(*this, other);
}
Variable Variable::pow(double exponent) const {
  return minigrad::pow(*this, exponent);
}
Variable Variable::exp() const {
  return minigrad::exp(*this);
}
Variable Variable::log() const {
  return minigrad::log(*this);
}
Variable Variable::sqrt() const {
  return minigrad::sqrt(*this);
}
Variable Variable::abs() const {
  return minigrad::abs(*this);
}
Variable Variable::tanh() const {
  return minigrad::tanh(*this);
}
Variable Variable::sigmoid() const {
  return minigrad::sigmoid(*this);
}
Variable Variable::relu() const {
  return minigrad::relu(*this);
}
Variable Variable::softmax(int64_t dim) const {
  return minigrad::softmax(*this, dim);
}
Variable Variable::log_softmax(int64_t dim) const {
  return minigrad::log_softmax(*this, dim);
}
Variable Variable::clamp(std::optional<double> min, std::optional<double> max) const {
  return minigrad::clamp(*this, min, max);
}

}  // namespace minigrad

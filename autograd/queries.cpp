// Questions asked of a Variable's value that have no derivative: which index is largest, which entries
// are equal. They read the data and return plain tensors, so they can be asked of a Variable directly.
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Tensor argmax(const Variable& x, int64_t dim, bool keepdim) {
  return argmax(x.data(), dim, keepdim);
}
Tensor argmin(const Variable& x, int64_t dim, bool keepdim) {
  return argmin(x.data(), dim, keepdim);
}
Tensor argmax(const Variable& x) {
  return argmax(x.data());
}
Tensor argmin(const Variable& x) {
  return argmin(x.data());
}
bool all(const Variable& x) {
  return all(x.data());
}
bool any(const Variable& x) {
  return any(x.data());
}

Tensor eq(const Variable& a, const Variable& b) {
  return eq(a.data(), b.data());
}
Tensor eq(const Variable& a, const Tensor& b) {
  return eq(a.data(), b);
}
Tensor ne(const Variable& a, const Tensor& b) {
  return ne(a.data(), b);
}
Tensor gt(const Variable& a, double s) {
  return gt(a.data(), s);
}
Tensor lt(const Variable& a, double s) {
  return lt(a.data(), s);
}

double accuracy(const Variable& logits, const Tensor& labels) {
  if (!logits.defined() || !labels.defined()) throw ValueError("accuracy", "an operand is undefined");
  if (logits.rank() != 2) throw ShapeError("accuracy", "logits must be (N, C), got " + logits.shape().str());
  check_dtype("accuracy", "the labels", labels, DType::Int64);
  if (labels.shape() != Shape{logits.shape()[0]}) {
    throw ShapeError("accuracy", "labels of shape " + labels.shape().str() + " for logits of shape " +
                                     logits.shape().str() + " (expected [" +
                                     std::to_string(logits.shape()[0]) + "])");
  }
  if (logits.shape()[0] == 0) throw ValueError("accuracy", "no rows");
  // A label no row can predict is a mistake in the data, not a wrong prediction: refused, as
  // cross_entropy refuses such a target.
  const int64_t classes = logits.shape()[1];
  for (int64_t label : labels.to_vector<int64_t>()) {
    if (label < 0 || label >= classes) {
      throw IndexError("accuracy", "label " + std::to_string(label) + " is out of range for " +
                                       std::to_string(classes) + " classes");
    }
  }
  return mean(eq(argmax(logits.data(), 1), labels).to(DType::Float64)).item();
}

}  // namespace minigrad

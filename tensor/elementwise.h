// Elementwise math on tensors, with NumPy broadcasting for two-operand ops:
//   [4,3] + [3] -> [4,3],   [2,1,5] * [3,1] -> [2,3,5].
// Arithmetic takes float32 or float64 operands of one dtype (convert with .to()); comparisons also take
// int64 and return bool tensors; masks are bool tensors. Every op returns a new contiguous tensor.
#pragma once

#include <optional>
#include <utility>

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// ---- two tensors, broadcast ----
// add also takes the row-sparse layout (tensor/row_sparse.h), of the other's shape.
Tensor add(const Tensor& a, const Tensor& b);
// total += g, as gradient accumulation needs it, whatever the layouts: in place into a dense, contiguous
// total; otherwise (a row-sparse total, or a row-sparse g into a strided view) total becomes the new sum.
void accumulate(Tensor& total, const Tensor& g);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
// Elementwise max and min; NaN in either operand gives NaN, as PyTorch's torch.maximum and minimum.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

// ---- a tensor and a scalar ----
Tensor add(const Tensor& x, double s);
Tensor mul(const Tensor& x, double s);
Tensor div(const Tensor& x, double s);
// s - x and s / x
Tensor rsub(double s, const Tensor& x);
Tensor rdiv(double s, const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
// min(max(x, min), max) for the bounds given (either may be absent); NaN stays NaN, as PyTorch's clamp.
// With min > max every element becomes max, as in PyTorch.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);

// ---- one tensor ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
// 1 where x > 0, -1 where x < 0, 0 at ±0 and, as PyTorch 1.13's torch.sign, at NaN.
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
// log(1 + x), accurate for small x.
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
// x where x > 0, else negative_slope·x (NaN stays NaN).
Tensor leaky_relu(const Tensor& x, double negative_slope);
// The exact GELU of Hendrycks and Gimpel, x·Φ(x) with Φ the standard normal CDF (PyTorch's default).
Tensor gelu(const Tensor& x);

// Inverted dropout with counter-based bits (DropoutMask in tensor/random.h): each element is kept with
// probability 1 - p and scaled by 1/(1 - p), the rest are multiplied by 0. One pass, no mask tensor; the
// same seed gives the same elements kept, so dropout's backward is this function on the gradient.
Tensor dropout(const Tensor& x, double p, uint64_t seed);

// ---- comparisons: bool results ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double s);
Tensor ne(const Tensor& a, double s);
Tensor lt(const Tensor& a, double s);
Tensor le(const Tensor& a, double s);
Tensor gt(const Tensor& a, double s);
Tensor ge(const Tensor& a, double s);

Tensor logical_not(const Tensor& mask);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);

// ---- selection ----
// cond ? a : b elementwise; cond is bool; all three broadcast together; a and b share a dtype.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// x with `value` where mask (bool, broadcast to x's shape) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// ---- operators ----
inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor operator+(const Tensor& x, double s) {
  return add(x, s);
}
inline Tensor operator+(double s, const Tensor& x) {
  return add(x, s);
}
inline Tensor operator-(const Tensor& x, double s) {
  return add(x, -s);
}
inline Tensor operator-(double s, const Tensor& x) {
  return rsub(s, x);
}
inline Tensor operator*(const Tensor& x, double s) {
  return mul(x, s);
}
inline Tensor operator*(double s, const Tensor& x) {
  return mul(x, s);
}
inline Tensor operator/(const Tensor& x, double s) {
  return div(x, s);
}
inline Tensor operator/(double s, const Tensor& x) {
  return rdiv(s, x);
}
inline Tensor operator-(const Tensor& x) {
  return neg(x);
}

// ---- backward kernels: each an op's gradient, g the gradient of the op's output ----
// relu: g where x > 0, else 0 (x enters only through its sign, a constant).
Tensor relu_backward(const Tensor& g, const Tensor& x);
// leaky_relu: g where x > 0, else negative_slope·g (PyTorch's formula: a NaN x gets negative_slope·g).
Tensor leaky_relu_backward(const Tensor& g, const Tensor& x, double negative_slope);
// gelu: g·(Φ(x) + x·φ(x)).
Tensor gelu_backward(const Tensor& g, const Tensor& x);
// pow: g·p·x^(p-1).
Tensor pow_backward(const Tensor& g, const Tensor& x, double exponent);
// maximum and minimum's gradient, as PyTorch 1.13's: g scaled by `tie_scale` (1/2 where a == b, else 1),
// then zeroed where an operand lost (bool masks, in the broadcast shape). Where either operand is NaN
// neither lost, so both get g. Zeroed, not multiplied by 0: an infinite or NaN g gives the loser 0.
struct SelectionGradient {
  Tensor a_lost, b_lost, tie_scale;
};
SelectionGradient maximum_gradient_parts(const Tensor& a, const Tensor& b);
SelectionGradient minimum_gradient_parts(const Tensor& a, const Tensor& b);
// clamp: g where min <= x <= max (each bound that is given), else 0; 0 at NaN, as PyTorch.
Tensor clamp_backward(const Tensor& g, const Tensor& x, std::optional<double> min, std::optional<double> max);

}  // namespace minigrad

// The methods a PyTorch user calls on a tensor, declared once for Tensor and for Variable (autograd/),
// which both derive from Methods<themselves>: x.sum(), x.mean({1}), x.max(), x.argmax(1), x.norm(),
// x.all(), x.flatten(1), x.masked_fill(mask, 0), and the comparisons x == y, x < 0.5 ... as bool tensors.
//
// Each method calls the free function of its name on the object: for a Tensor the kernel (tensor/reduce.h,
// tensor/elementwise.h), for a Variable the differentiable op (autograd/functions.h), so x.sum() is
// sum(x) whichever x is. The call goes through a helper in `method_calls`, because inside a member named
// sum the name "sum" means the member; from the helper, the call finds the function for the argument's
// type where the program uses it (argument-dependent lookup), so a Tensor's methods need the ops' headers
// (tensor/ops.h, or minigrad.h) where they are called.
#pragma once

#include <cstdint>

#include "minigrad/tensor/shape.h"

namespace minigrad {

class Tensor;

namespace method_calls {
template <typename T, typename... A>
auto sum_of(const T& x, const A&... a) {
  return sum(x, a...);
}
template <typename T, typename... A>
auto mean_of(const T& x, const A&... a) {
  return mean(x, a...);
}
template <typename T, typename... A>
auto max_of(const T& x, const A&... a) {
  return max(x, a...);
}
template <typename T, typename... A>
auto min_of(const T& x, const A&... a) {
  return min(x, a...);
}
template <typename T, typename... A>
auto argmax_of(const T& x, const A&... a) {
  return argmax(x, a...);
}
template <typename T, typename... A>
auto argmin_of(const T& x, const A&... a) {
  return argmin(x, a...);
}
template <typename T, typename... A>
auto norm_of(const T& x, const A&... a) {
  return norm(x, a...);
}
template <typename T>
auto flatten_of(const T& x, int64_t start_dim, int64_t end_dim) {
  return flatten(x, start_dim, end_dim);
}
template <typename T>
bool all_of(const T& x) {
  return all(x);
}
template <typename T>
bool any_of(const T& x) {
  return any(x);
}
template <typename T, typename M>
auto masked_fill_of(const T& x, const M& mask, double value) {
  return masked_fill(x, mask, value);
}
// The comparisons, as bool tensors of the broadcast shape: of a Variable, of its data.
template <typename T>
const auto& data_of(const T& x) {
  if constexpr (requires { x.data(); })
    return x.data();
  else
    return x;
}
template <typename A, typename B>
auto eq_of(const A& a, const B& b) {
  return eq(data_of(a), b);
}
template <typename A, typename B>
auto ne_of(const A& a, const B& b) {
  return ne(data_of(a), b);
}
template <typename A, typename B>
auto lt_of(const A& a, const B& b) {
  return lt(data_of(a), b);
}
template <typename A, typename B>
auto le_of(const A& a, const B& b) {
  return le(data_of(a), b);
}
template <typename A, typename B>
auto gt_of(const A& a, const B& b) {
  return gt(data_of(a), b);
}
template <typename A, typename B>
auto ge_of(const A& a, const B& b) {
  return ge(data_of(a), b);
}
}  // namespace method_calls

template <typename Self>
class Methods {
 public:
  // ---- reductions: over everything (a 0-dimensional result), or over `dims` ----
  auto sum() const { return method_calls::sum_of(self()); }
  auto sum(const Shape& dims, bool keepdim = false) const {
    return method_calls::sum_of(self(), dims, keepdim);
  }
  auto mean() const { return method_calls::mean_of(self()); }
  auto mean(const Shape& dims, bool keepdim = false) const {
    return method_calls::mean_of(self(), dims, keepdim);
  }
  auto max() const { return method_calls::max_of(self()); }
  auto max(int64_t dim, bool keepdim = false) const { return method_calls::max_of(self(), dim, keepdim); }
  auto min() const { return method_calls::min_of(self()); }
  auto min(int64_t dim, bool keepdim = false) const { return method_calls::min_of(self(), dim, keepdim); }
  // int64 indices (a Tensor, for a Variable too): of the whole tensor flattened, or along `dim`
  auto argmax() const { return method_calls::argmax_of(self()); }
  auto argmax(int64_t dim, bool keepdim = false) const {
    return method_calls::argmax_of(self(), dim, keepdim);
  }
  auto argmin() const { return method_calls::argmin_of(self()); }
  auto argmin(int64_t dim, bool keepdim = false) const {
    return method_calls::argmin_of(self(), dim, keepdim);
  }
  // The p-norm, 2 by default: w.grad().norm()
  auto norm(double p = 2.0) const { return method_calls::norm_of(self(), p); }
  auto norm(double p, const Shape& dims, bool keepdim = false) const {
    return method_calls::norm_of(self(), p, dims, keepdim);
  }
  // Whether every (any) element is true, as a bool (PyTorch: a one-element tensor).
  bool all() const { return method_calls::all_of(self()); }
  bool any() const { return method_calls::any_of(self()); }

  // ---- shape: dimensions start_dim..end_dim merged into one; x.flatten() is all of them ----
  auto flatten(int64_t start_dim = 0, int64_t end_dim = -1) const {
    return method_calls::flatten_of(self(), start_dim, end_dim);
  }

  // x with `value` where mask (bool, broadcast to x's shape) is true; out of place, as PyTorch's.
  template <typename Mask>
  auto masked_fill(const Mask& mask, double value) const {
    return method_calls::masked_fill_of(self(), mask, value);
  }

  // ---- comparisons: bool tensors, broadcast; NaN compares unequal to everything ----
  friend auto operator==(const Self& a, const Self& b) {
    return method_calls::eq_of(a, method_calls::data_of(b));
  }
  friend auto operator!=(const Self& a, const Self& b) {
    return method_calls::ne_of(a, method_calls::data_of(b));
  }
  friend auto operator<(const Self& a, const Self& b) {
    return method_calls::lt_of(a, method_calls::data_of(b));
  }
  friend auto operator<=(const Self& a, const Self& b) {
    return method_calls::le_of(a, method_calls::data_of(b));
  }
  friend auto operator>(const Self& a, const Self& b) {
    return method_calls::gt_of(a, method_calls::data_of(b));
  }
  friend auto operator>=(const Self& a, const Self& b) {
    return method_calls::ge_of(a, method_calls::data_of(b));
  }
  friend auto operator==(const Self& a, double s) { return method_calls::eq_of(a, s); }
  friend auto operator!=(const Self& a, double s) { return method_calls::ne_of(a, s); }
  friend auto operator<(const Self& a, double s) { return method_calls::lt_of(a, s); }
  friend auto operator<=(const Self& a, double s) { return method_calls::le_of(a, s); }
  friend auto operator>(const Self& a, double s) { return method_calls::gt_of(a, s); }
  friend auto operator>=(const Self& a, double s) { return method_calls::ge_of(a, s); }
  friend auto operator==(double s, const Self& a) { return method_calls::eq_of(a, s); }
  friend auto operator!=(double s, const Self& a) { return method_calls::ne_of(a, s); }
  friend auto operator<(double s, const Self& a) { return method_calls::gt_of(a, s); }
  friend auto operator<=(double s, const Self& a) { return method_calls::ge_of(a, s); }
  friend auto operator>(double s, const Self& a) { return method_calls::lt_of(a, s); }
  friend auto operator>=(double s, const Self& a) { return method_calls::le_of(a, s); }

 private:
  const Self& self() const { return static_cast<const Self&>(*this); }
};

}  // namespace minigrad

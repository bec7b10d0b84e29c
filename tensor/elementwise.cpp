#include "minigrad/tensor/elementwise.h"

#include <cmath>
#include <numbers>

#include "minigrad/tensor/fast_math.h"
#include "minigrad/tensor/map.h"
#include "minigrad/tensor/random.h"
#include "minigrad/tensor/row_sparse.h"

namespace minigrad {

Shape check_float_pair(std::string_view op, const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) throw ValueError(op, "an operand is undefined");
  check_dense(op, a);
  check_dense(op, b);
  if (!is_floating(a.dtype()) || a.dtype() != b.dtype()) {
    throw DTypeError(op, "expected two float32 or two float64 tensors, got " +
                             std::string(dtype_name(a.dtype())) + " and " +
                             std::string(dtype_name(b.dtype())) + conversion_hint({a.dtype(), b.dtype()}));
  }
  return broadcast_shapes(op, a.shape(), b.shape());
}

namespace {

// A bool tensor of the broadcast shape with out[i] = f(a[i], b[i]); a and b share a dtype.
template <typename F>
Tensor compare(std::string_view op, const Tensor& a, const Tensor& b, F f) {
  if (!a.defined() || !b.defined()) throw ValueError(op, "an operand is undefined");
  if (a.dtype() != b.dtype()) {
    throw DTypeError(op, "dtypes " + std::string(dtype_name(a.dtype())) + " and " +
                             std::string(dtype_name(b.dtype())) + " differ" +
                             conversion_hint({a.dtype(), b.dtype()}, a.dtype()));
  }
  const Shape shape = broadcast_shapes(op, a.shape(), b.shape());
  Tensor out = Tensor::empty(shape, DType::Bool);
  const auto plan =
      make_loop_plan<3>(shape, {out.strides(), broadcast_strides(a, shape), broadcast_strides(b, shape)});
  dispatch_all(a.dtype(), [&]<typename T>() {
    run_binary(plan, out.data_ptr<bool>(), a.data_ptr<const T>(), b.data_ptr<const T>(),
               [&](T u, T v) -> bool { return f(u, v); });
  });
  return out;
}

// Compares with a scalar by broadcasting it as a rank-0 tensor of a's dtype.
template <typename F>
Tensor compare(std::string_view op, const Tensor& a, double s, F f) {
  if (!a.defined()) throw ValueError(op, "the tensor is undefined");
  return compare(op, a, Tensor::scalar(s, a.dtype()), f);
}

template <typename F>
Tensor logical(std::string_view op, const Tensor& a, const Tensor& b, F f) {
  if (a.dtype() != DType::Bool || b.dtype() != DType::Bool) {
    throw DTypeError(op, "expects bool tensors, got " + std::string(dtype_name(a.dtype())) + " and " +
                             std::string(dtype_name(b.dtype())));
  }
  return compare(op, a, b, f);
}

void check_defined(std::string_view op, const Tensor& x) {
  if (!x.defined()) throw ValueError(op, "the tensor is undefined");
}

}  // namespace

// ---- two tensors ----
Tensor add(const Tensor& a, const Tensor& b) {
  if (a.is_row_sparse() || b.is_row_sparse()) return add_row_sparse(a, b);
  return zip_float("add", a, b, [](auto x, auto y) { return x + y; });
}
void accumulate(Tensor& total, const Tensor& g) {
  const bool in_place = !total.is_row_sparse() && (!g.is_row_sparse() || total.is_contiguous());
  if (in_place) {
    total.add_(g);
  } else {
    total = add(total, g);
  }
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return zip_float("sub", a, b, [](auto x, auto y) { return x - y; });
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return zip_float("mul", a, b, [](auto x, auto y) { return x * y; });
}
Tensor div(const Tensor& a, const Tensor& b) {
  return zip_float("div", a, b, [](auto x, auto y) { return x / y; });
}
// A NaN in either operand gives NaN, and a tie gives the first operand (max(-0, 0) is -0), as PyTorch.
Tensor maximum(const Tensor& a, const Tensor& b) {
  return zip_float("maximum", a, b, [](auto x, auto y) { return x < y || std::isnan(y) ? y : x; });
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return zip_float("minimum", a, b, [](auto x, auto y) { return y < x || std::isnan(y) ? y : x; });
}

// ---- tensor and scalar: the scalar is converted to the tensor's dtype once, outside the loop ----
Tensor add(const Tensor& x, double s) {
  return map_float("add", x, [s](auto v) { return v + decltype(v)(s); });
}
Tensor mul(const Tensor& x, double s) {
  return map_float("mul", x, [s](auto v) { return v * decltype(v)(s); });
}
Tensor div(const Tensor& x, double s) {
  return map_float("div", x, [s](auto v) { return v / decltype(v)(s); });
}
Tensor rsub(double s, const Tensor& x) {
  return map_float("rsub", x, [s](auto v) { return decltype(v)(s) - v; });
}
Tensor rdiv(double s, const Tensor& x) {
  return map_float("rdiv", x, [s](auto v) { return decltype(v)(s) / v; });
}
Tensor pow(const Tensor& x, double exponent) {
  // Squares and square roots are common (variance, norms) and far cheaper than the general pow.
  if (exponent == 2.0) return map_float("pow", x, [](auto v) { return v * v; });
  if (exponent == 1.0) return x.clone();
  if (exponent == 0.5) return map_float("pow", x, [](auto v) { return std::sqrt(v); });
  return map_float("pow", x, [exponent](auto v) { return std::pow(v, decltype(v)(exponent)); });
}
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max) {
  const double lo = min.value_or(-INFINITY), hi = max.value_or(INFINITY);
  if (std::isnan(lo) || std::isnan(hi))
    return map_float("clamp", x, [](auto v) { return v + NAN; });  // PyTorch
  return map_float("clamp", x, [lo, hi](auto v) {
    using T = decltype(v);
    const T low = v < T(lo) ? T(lo) : v;  // a NaN fails both comparisons and stays
    return low > T(hi) ? T(hi) : low;
  });
}

// ---- one tensor ----
Tensor neg(const Tensor& x) {
  return map_float("neg", x, [](auto v) { return -v; });
}
Tensor abs(const Tensor& x) {
  return map_float("abs", x, [](auto v) { return std::abs(v); });
}
Tensor sign(const Tensor& x) {
  return map_float("sign", x, [](auto v) {
    using T = decltype(v);
    return v > 0 ? T(1) : (v < 0 ? T(-1) : T(0));
  });
}
Tensor exp(const Tensor& x) {
  return map_float("exp", x, [](auto v) { return fast_exp(v); });
}
Tensor log(const Tensor& x) {
  return map_float("log", x, [](auto v) { return std::log(v); });
}
Tensor log1p(const Tensor& x) {
  return map_float("log1p", x, [](auto v) { return std::log1p(v); });
}
Tensor sqrt(const Tensor& x) {
  return map_float("sqrt", x, [](auto v) { return std::sqrt(v); });
}
Tensor tanh(const Tensor& x) {
  return map_float("tanh", x, [](auto v) { return fast_tanh(v); });
}
Tensor sigmoid(const Tensor& x) {
  return map_float("sigmoid", x, [](auto v) { return stable_sigmoid(v); });
}
Tensor relu(const Tensor& x) {
  // Written `v < 0 ? 0 : v`, not `v > 0 ? v : 0`: a comparison with NaN is false, so NaN stays NaN (as in
  // PyTorch) instead of turning into a silent 0 that hides a broken batch. -0 and 0 give 0 either way.
  return map_float("relu", x, [](auto v) { return v < 0 ? decltype(v)(0) : v; });
}
Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return map_float("leaky_relu", x, [negative_slope](auto v) {
    return v > 0 ? v : v * decltype(v)(negative_slope);  // NaN: NaN·slope is NaN
  });
}
Tensor gelu(const Tensor& x) {
  return map_float("gelu", x, [](auto v) {
    using T = decltype(v);
    return T(0.5) * v * (T(1) + std::erf(v * T(std::numbers::sqrt2 / 2)));
  });
}

Tensor dropout(const Tensor& x, double p, uint64_t seed) {
  if (!x.defined()) throw ValueError("dropout", "the tensor is undefined");
  if (!(p >= 0 && p <= 1)) throw ValueError("dropout", "p must be in [0, 1], got " + std::to_string(p));
  const Tensor c = x.contiguous();  // element i of the mask is element i in row-major order
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const DropoutMask mask(p, seed);
  dispatch_float(x.dtype(), "dropout", [&]<typename T>() {
    const T* src = c.data_ptr<const T>();
    T* dst = out.data_ptr<T>();
    parallel_for(c.numel(), 4, [&](int64_t begin, int64_t end) {
      mask.apply(src + begin, dst + begin, begin, end - begin);
    });
  });
  return out;
}

// ---- comparisons ----
Tensor eq(const Tensor& a, const Tensor& b) {
  return compare("eq", a, b, [](auto x, auto y) { return x == y; });
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return compare("ne", a, b, [](auto x, auto y) { return x != y; });
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return compare("lt", a, b, [](auto x, auto y) { return x < y; });
}
Tensor le(const Tensor& a, const Tensor& b) {
  return compare("le", a, b, [](auto x, auto y) { return x <= y; });
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return compare("gt", a, b, [](auto x, auto y) { return x > y; });
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return compare("ge", a, b, [](auto x, auto y) { return x >= y; });
}
Tensor eq(const Tensor& a, double s) {
  return compare("eq", a, s, [](auto x, auto y) { return x == y; });
}
Tensor ne(const Tensor& a, double s) {
  return compare("ne", a, s, [](auto x, auto y) { return x != y; });
}
Tensor lt(const Tensor& a, double s) {
  return compare("lt", a, s, [](auto x, auto y) { return x < y; });
}
Tensor le(const Tensor& a, double s) {
  return compare("le", a, s, [](auto x, auto y) { return x <= y; });
}
Tensor gt(const Tensor& a, double s) {
  return compare("gt", a, s, [](auto x, auto y) { return x > y; });
}
Tensor ge(const Tensor& a, double s) {
  return compare("ge", a, s, [](auto x, auto y) { return x >= y; });
}

Tensor logical_not(const Tensor& mask) {
  check_defined("logical_not", mask);
  if (mask.dtype() != DType::Bool) {
    throw DTypeError("logical_not", "expects a bool tensor, got " + std::string(dtype_name(mask.dtype())));
  }
  Tensor out = Tensor::empty(mask.shape(), DType::Bool);
  const auto plan = make_loop_plan<2>(mask.shape(), {out.strides(), mask.strides()});
  run_unary(plan, out.data_ptr<bool>(), mask.data_ptr<const bool>(), [](bool m) { return !m; });
  return out;
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return logical("logical_and", a, b, [](bool x, bool y) { return x && y; });
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return logical("logical_or", a, b, [](bool x, bool y) { return x || y; });
}

// ---- selection ----
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (!cond.defined() || !a.defined() || !b.defined()) throw ValueError("where", "an operand is undefined");
  check_dtype("where", "the condition", cond, DType::Bool);
  if (a.dtype() != b.dtype()) {
    throw DTypeError("where", "dtypes " + std::string(dtype_name(a.dtype())) + " and " +
                                  std::string(dtype_name(b.dtype())) + " differ");
  }
  const Shape shape =
      broadcast_shapes("where", cond.shape(), broadcast_shapes("where", a.shape(), b.shape()));
  Tensor out = Tensor::empty(shape, a.dtype());
  const auto plan = make_loop_plan<4>(shape, {out.strides(), broadcast_strides(cond, shape),
                                              broadcast_strides(a, shape), broadcast_strides(b, shape)});
  dispatch_all(a.dtype(), [&]<typename T>() {
    run_ternary(plan, out.data_ptr<T>(), cond.data_ptr<const bool>(), a.data_ptr<const T>(),
                b.data_ptr<const T>(), [](bool c, T u, T v) { return c ? u : v; });
  });
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  check_defined("masked_fill", x);
  check_defined("masked_fill", mask);
  if (broadcast_shapes("masked_fill", x.shape(), mask.shape()) != x.shape()) {
    throw ShapeError("masked_fill",
                     "mask of shape " + mask.shape().str() + " does not broadcast to " + x.shape().str());
  }
  check_dtype("masked_fill", "the mask", mask, DType::Bool);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const auto plan =
      make_loop_plan<3>(x.shape(), {out.strides(), x.strides(), broadcast_strides(mask, x.shape())});
  dispatch_all(x.dtype(), [&]<typename T>() {
    const T v = static_cast<T>(value);
    run_binary(plan, out.data_ptr<T>(), x.data_ptr<const T>(), mask.data_ptr<const bool>(),
               [v](T a, bool m) { return m ? v : a; });
  });
  return out;
}

// g·p·x^(p-1), fused; 0 for p = 0, as PyTorch (not 0·x^-1, which is NaN at x = 0).
Tensor pow_backward(const Tensor& g, const Tensor& x, double exponent) {
  if (exponent == 0) return zip_float("pow_backward", g, x, [](auto g, auto) { return decltype(g)(0); });
  return zip_float("pow_backward", g, x, [exponent](auto g, auto x) {
    using T = decltype(x);
    return g * T(exponent) * std::pow(x, T(exponent - 1));
  });
}

SelectionGradient maximum_gradient_parts(const Tensor& a, const Tensor& b) {
  return {lt(a, b), gt(a, b), where(eq(a, b), Tensor::scalar(0.5, a.dtype()), Tensor::scalar(1, a.dtype()))};
}
SelectionGradient minimum_gradient_parts(const Tensor& a, const Tensor& b) {
  return {gt(a, b), lt(a, b), where(eq(a, b), Tensor::scalar(0.5, a.dtype()), Tensor::scalar(1, a.dtype()))};
}

// PyTorch's clamp_backward: g where x >= min and x <= max. A NaN fails the comparisons and gets 0.
Tensor clamp_backward(const Tensor& g, const Tensor& x, std::optional<double> min,
                      std::optional<double> max) {
  const double lo = min.value_or(-INFINITY), hi = max.value_or(INFINITY);
  return zip_float("clamp_backward", g, x, [lo, hi](auto g, auto x) {
    using T = decltype(g);
    return x >= T(lo) && x <= T(hi) ? g : T(0);
  });
}

// PyTorch's threshold_backward: 0 where x <= 0, else g. At x = NaN the comparison is false and g passes,
// so a NaN input keeps its upstream gradient, as in PyTorch, rather than a silent 0.
Tensor relu_backward(const Tensor& g, const Tensor& x) {
  return zip_float("relu_backward", g, x, [](auto g, auto x) { return x <= 0 ? decltype(g)(0) : g; });
}

Tensor leaky_relu_backward(const Tensor& g, const Tensor& x, double negative_slope) {
  return zip_float("leaky_relu_backward", g, x,
                   [negative_slope](auto g, auto x) { return x > 0 ? g : g * decltype(g)(negative_slope); });
}

namespace {

template <typename T>
T gelu_slope(T x) {
  const T cdf = T(0.5) * (1 + std::erf(x * T(std::numbers::sqrt2 / 2)));
  return cdf + x * std::exp(T(-0.5) * x * x) * T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
}

}  // namespace

Tensor gelu_backward(const Tensor& g, const Tensor& x) {
  return zip_float("gelu_backward", g, x, [](auto g, auto x) { return g * gelu_slope(x); });
}

}  // namespace minigrad

// Elementwise maps: the one strided loop behind every elementwise kernel in minigrad.
//
// An op describes its operands by their strides over a common (broadcast) shape. make_loop_plan merges
// the dimensions that every operand walks contiguously, so [N, D] + [N, D] becomes one flat loop of N*D
// and [N, D] + [D] becomes N runs of D. for_each_run then hands the kernel one run at a time, spread over
// the threads, and the kernel's inner loop is a plain pointer loop with no shape arithmetic in it.
//
// map_float and zip_float package this for the common case; mul_map is the fused backward of an
// elementwise op whose derivative is a formula (autograd/pointwise.h):
//
//   Tensor dx = mul_map("tanh_backward", grad, y, [](auto y) { return 1 - y * y; });  // g·(1 - y²)
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "minigrad/tensor/tensor.h"
#include "minigrad/tensor/threads.h"

namespace minigrad {

// The iteration space of an elementwise op after merging dimensions, and each operand's strides over it.
template <int N>
struct LoopPlan {
  Shape shape;
  std::array<Shape, N> strides;
};

template <int N>
LoopPlan<N> make_loop_plan(const Shape& shape, const std::array<Shape, N>& strides) {
  LoopPlan<N> plan;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 1) continue;  // a size-1 dimension moves no operand
    const int r = plan.shape.rank();
    // Dimension d continues the previous kept dimension when, for every operand, stepping the previous
    // one is the same as stepping d all the way through.
    bool merge = r > 0;
    for (int k = 0; k < N && merge; ++k) merge = plan.strides[k][r - 1] == strides[k][d] * shape[d];
    if (merge) {
      plan.shape[r - 1] *= shape[d];
      for (int k = 0; k < N; ++k) plan.strides[k][r - 1] = strides[k][d];
    } else {
      plan.shape.push_back(shape[d]);
      for (int k = 0; k < N; ++k) plan.strides[k].push_back(strides[k][d]);
    }
  }
  if (plan.shape.rank() == 0) {  // a scalar, or all sizes 1: one element
    plan.shape.push_back(1);
    for (int k = 0; k < N; ++k) plan.strides[k].push_back(0);
  }
  return plan;
}

// Strides that read `t` as if it had `shape` (which it must broadcast to): 0 where it is broadcast.
inline Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  Shape strides = Shape::filled(shape.rank(), 0);
  const int lead = shape.rank() - t.rank();
  for (int d = 0; d < t.rank(); ++d) strides[lead + d] = t.shape()[d] == 1 ? 0 : t.strides()[d];
  return strides;
}

// Calls run(n, offsets) for consecutive runs of n elements along the innermost dimension of the plan;
// offsets[k] is operand k's element offset at the start of the run. The elements are split into one
// contiguous range per thread; each range starts mid-row if it must.
template <int N, typename Run>
void for_each_run(const LoopPlan<N>& plan, Run&& run) {
  const Shape& shape = plan.shape;
  const int rank = shape.rank();
  const int64_t inner = shape[rank - 1];
  parallel_for(shape.numel(), 1, [&](int64_t begin, int64_t end) {
    // The multi-index of `begin`, and every operand's offset there.
    Shape index = Shape::filled(rank, 0);
    std::array<int64_t, N> offset{};
    int64_t rest = begin;
    for (int d = rank - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
      for (int k = 0; k < N; ++k) offset[k] += index[d] * plan.strides[k][d];
    }
    for (int64_t e = begin; e < end;) {
      const int64_t n = std::min(inner - index[rank - 1], end - e);
      run(n, offset);
      e += n;
      // Step the innermost index by n and carry into the outer dimensions like an odometer.
      index[rank - 1] += n;
      for (int k = 0; k < N; ++k) offset[k] += n * plan.strides[k][rank - 1];
      for (int d = rank - 1; d > 0 && index[d] == shape[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
        for (int k = 0; k < N; ++k) offset[k] += plan.strides[k][d - 1] - shape[d] * plan.strides[k][d];
      }
    }
  });
}

// The innermost loops: one run of n elements, each operand with its own stride. They are
// [[gnu::flatten]], which inlines everything they call (the op's lambda, and what that calls) into the
// loop: in a big file GCC's inlining budget runs out, a call stays in the loop, and the loop stays scalar
// (one element at a time). `omp simd` asks for vectorization; the operands never overlap (an output is
// either fresh or, in place, identical to an input). The branches give the vectorizer plain loops for
// the cases that matter: all contiguous, and one operand broadcast along the run.
template <typename O, typename A, typename F>
[[gnu::flatten]] void unary_run(int64_t n, O* out, int64_t so, const A* a, int64_t sa, const F& f) {
  if (so == 1 && sa == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i * so] = f(a[i * sa]);
  }
}

template <typename O, typename A, typename B, typename F>
[[gnu::flatten]] void binary_run(int64_t n, O* out, int64_t so, const A* a, int64_t sa, const B* b,
                                 int64_t sb, const F& f) {
  if (so == 1 && sa == 1 && sb == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (so == 1 && sa == 1 && sb == 0) {
    const B vb = *b;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], vb);
  } else if (so == 1 && sa == 0 && sb == 1) {
    const A va = *a;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = f(va, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i * so] = f(a[i * sa], b[i * sb]);
  }
}

// out[i] = f(a[i]) over a plan of two operands (out, a).
template <typename O, typename A, typename F>
void run_unary(const LoopPlan<2>& plan, O* out, const A* a, F f) {
  const int64_t so = plan.strides[0].back(), sa = plan.strides[1].back();
  for_each_run(plan, [&](int64_t n, const std::array<int64_t, 2>& off) {
    unary_run(n, out + off[0], so, a + off[1], sa, f);
  });
}

// out[i] = f(a[i], b[i]) over a plan of three operands (out, a, b).
template <typename O, typename A, typename B, typename F>
void run_binary(const LoopPlan<3>& plan, O* out, const A* a, const B* b, F f) {
  const int64_t so = plan.strides[0].back(), sa = plan.strides[1].back(), sb = plan.strides[2].back();
  for_each_run(plan, [&](int64_t n, const std::array<int64_t, 3>& off) {
    binary_run(n, out + off[0], so, a + off[1], sa, b + off[2], sb, f);
  });
}

// out[i] = f(a[i], b[i], c[i]) over a plan of four operands (for `where`).
template <typename O, typename A, typename B, typename C, typename F>
void run_ternary(const LoopPlan<4>& plan, O* out, const A* a, const B* b, const C* c, F f) {
  const int64_t so = plan.strides[0].back(), sa = plan.strides[1].back(), sb = plan.strides[2].back(),
                sc = plan.strides[3].back();
  for_each_run(plan, [&](int64_t n, const std::array<int64_t, 4>& off) {
    O* po = out + off[0];
    const A* pa = a + off[1];
    const B* pb = b + off[2];
    const C* pc = c + off[3];
    if (so == 1 && sa == 1 && sb == 0 && sc == 0) {  // where(mask, scalar, scalar): a dropout mask's shape
      const B vb = *pb;
      const C vc = *pc;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], vb, vc);
    } else {
      for (int64_t i = 0; i < n; ++i) po[i * so] = f(pa[i * sa], pb[i * sb], pc[i * sc]);
    }
  });
}

// A new contiguous tensor y of x's shape and float dtype with y[i] = f(x[i]). f is generic: f(auto v).
template <typename F>
Tensor map_float(std::string_view op, const Tensor& x, F f) {
  check_dense(op, x);
  return dispatch_float(x.dtype(), op, [&]<typename T>() {
    Tensor out = Tensor::empty(x.shape(), x.dtype());
    const T* px = x.data_ptr<const T>();
    T* po = out.data_ptr<T>();
    auto typed = [&f](T v) { return static_cast<T>(f(v)); };
    if (x.is_contiguous()) {  // the common case, without the cost of a loop plan
      parallel_for(x.numel(), 1, [&](int64_t begin, int64_t end) {
        unary_run(end - begin, po + begin, 1, px + begin, 1, typed);
      });
      return out;
    }
    run_unary(make_loop_plan<2>(x.shape(), {out.strides(), x.strides()}), po, px, typed);
    return out;
  });
}

// Checks that a and b are float tensors of one dtype and returns their broadcast shape.
Shape check_float_pair(std::string_view op, const Tensor& a, const Tensor& b);

// A new contiguous tensor of the broadcast shape with out[i] = f(a[i], b[i]); a and b share a float dtype.
template <typename F>
Tensor zip_float(std::string_view op, const Tensor& a, const Tensor& b, F f) {
  const Shape shape = check_float_pair(op, a, b);
  return dispatch_float(a.dtype(), op, [&]<typename T>() {
    Tensor out = Tensor::empty(shape, a.dtype());
    const T* pa = a.data_ptr<const T>();
    const T* pb = b.data_ptr<const T>();
    T* po = out.data_ptr<T>();
    auto typed = [&f](T u, T v) { return static_cast<T>(f(u, v)); };
    if (a.shape() == b.shape() && a.is_contiguous() && b.is_contiguous()) {  // no broadcasting: one flat loop
      parallel_for(out.numel(), 1, [&](int64_t begin, int64_t end) {
        binary_run(end - begin, po + begin, 1, pa + begin, 1, pb + begin, 1, typed);
      });
      return out;
    }
    const auto plan =
        make_loop_plan<3>(shape, {out.strides(), broadcast_strides(a, shape), broadcast_strides(b, shape)});
    run_binary(plan, po, pa, pb, typed);
    return out;
  });
}

// out[i] = g[i]·f(v[i]), in one pass: the kernel of a backward whose derivative is a formula f of one
// tensor v, the op's input or output (autograd/pointwise.h). f is generic: f(auto v).
template <typename F>
Tensor mul_map(std::string_view op, const Tensor& g, const Tensor& v, F f) {
  return zip_float(op, g, v, [&f](auto g, auto v) { return g * f(v); });
}

}  // namespace minigrad

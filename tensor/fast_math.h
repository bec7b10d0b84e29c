// Scalar math functions written so that a loop calling them vectorizes: no calls, no branches that the
// compiler cannot turn into selects. glibc's expf is a call, and a loop of calls stays scalar; softmax
// spends most of its time in exp, so float32 gets its own.
//
// They are always_inline: in a large file GCC's inlining budget runs out and it may call them out of
// line instead, which leaves the loop around them scalar and 15 times slower (measured on exp).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace minigrad {

// a·b + c, fused into one instruction (and one rounding) where the CPU has FMA. In ISO C++ mode the
// compiler will not fuse a*b + c by itself.
[[gnu::always_inline]] inline float madd(float a, float b, float c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// exp(x) for float32 within about 1.5 ulp, for x already clamped to [-87, 88]:
//   x = n·ln2 + r with |r| <= ln2/2, so exp(x) = 2^n · exp(r);
//   exp(r) from a degree-6 polynomial (fitted for relative error on that interval: 0.6 ulp in float32
//   Horner form); 2^n built directly in the exponent bits.
[[gnu::always_inline]] inline float exp_of_clamped(float xc) {
  // Adding 1.5·2^23 rounds x/ln2 to an integer and leaves it in the low mantissa bits of t.
  const float t = madd(xc, 1.44269504088896341f, 12582912.0f);
  const float n = t - 12582912.0f;
  const uint32_t n_bits = std::bit_cast<uint32_t>(t) - 0x4B400000u;
  // r = x - n·ln2, with ln2 split into a short head (exact product) and a tail (Cody and Waite).
  const float r = madd(n, 2.12194440e-4f, madd(n, -0.693359375f, xc));
  float p = 0.001383684459142387f;
  p = madd(p, r, 0.008374815806746483f);
  p = madd(p, r, 0.04166822507977486f);
  p = madd(p, r, 0.16666419804096222f);
  p = madd(p, r, 0.49999991059303284f);
  p = madd(p, r, 1.0f);
  p = madd(p, r, 1.0f);
  return p * std::bit_cast<float>((n_bits + 127u) << 23);
}

// exp(x) for any float32. Results below the smallest normal float (x < -87) are flushed to 0, so
// exp(-inf) = 0 as softmax wants; x > 88 overflows to inf; NaN propagates.
[[gnu::always_inline]] inline float fast_exp(float x) {
  // Clamp so the exponent arithmetic stays in range; NaN fails both tests and stays NaN.
  const float y = exp_of_clamped(x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x));
  return x < -87.0f ? 0.0f : (x > 88.0f ? std::numeric_limits<float>::infinity() : y);
}

// exp(x) for x <= 0, the argument softmax and cross-entropy have after subtracting the row maximum:
// without the overflow side, a third fewer instructions than fast_exp around the polynomial, which
// measured 25-30% faster in softmax's inner loop.
[[gnu::always_inline]] inline float fast_exp_nonpositive(float x) {
  const float y = exp_of_clamped(x < -87.0f ? -87.0f : x);
  return x < -87.0f ? 0.0f : y;
}

// float64 keeps the C library's exp: gradient checks in float64 need every digit, and float64 is not
// where speed is measured.
[[gnu::always_inline]] inline double fast_exp(double x) {
  return std::exp(x);
}
[[gnu::always_inline]] inline double fast_exp_nonpositive(double x) {
  return std::exp(x);
}

// tanh(x) for float32 within about 2 ulp (Cephes' tanhf, written branch-free), from |x| with x's sign:
// near 0, where 1 - 2/(e^2|x| + 1) would cancel, the polynomial |x| + |x|³·P(x²); elsewhere that
// formula with fast_exp.
// glibc's tanhf is a call (into expm1f), which kept recurrent layers' loops scalar: a fifth of an LSTM's
// time went there.
[[gnu::always_inline]] inline float fast_tanh(float x) {
  const float a = std::abs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = madd(p, z, 2.06390887954e-2f);
  p = madd(p, z, -5.37397155531e-2f);
  p = madd(p, z, 1.33314422036e-1f);
  p = madd(p, z, -3.33332819422e-1f);
  const float near_zero = madd(p * z, a, a);
  // 2|x| > 88 overflows fast_exp to inf, and 2/inf = 0 gives 1; NaN falls through to here and stays NaN.
  const float far = 1.0f - 2.0f / (fast_exp(2.0f * a) + 1.0f);
  return std::copysign(a < 0.625f ? near_zero : far, x);  // odd, and tanh(-0) = -0
}
// float64 keeps the C library's, as fast_exp does.
[[gnu::always_inline]] inline double fast_tanh(double x) {
  return std::tanh(x);
}

// Numerically stable logistic function: never computes exp of a large positive number.
template <typename T>
[[gnu::always_inline]] inline T stable_sigmoid(T x) {
  const T e = fast_exp(x < 0 ? x : -x);  // exp(-|x|) in (0, 1]
  return x >= 0 ? T(1) / (T(1) + e) : e / (T(1) + e);
}

}  // namespace minigrad

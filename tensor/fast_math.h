// Scalar math functions written so that a loop calling them vectorizes: no calls, no branches that the
// compiler cannot turn into selects. glibc's expf is a call, and a loop of calls stays scalar; softmax
// spends most of its time in exp, so float32 gets its own.
//
// They are always_inline: in a large file GCC's inlining budget runs out and it may call them out of
// line instead, which leaves the loop around them scalar, one element at a time instead of a vector's worth.
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

// exp(x) for float32 as p·2^n, within about 1.5 ulp, for x already clamped to [-104, 89]:
//   x = n·ln2 + r with |r| <= ln2/2, so exp(x) = 2^n · exp(r), and p = exp(r) from a degree-6
//   polynomial (fitted for relative error on that interval: 0.6 ulp in float32 Horner form).
// n runs from -150 to 128, past the normal exponents at both ends, so the callers build 2^n in two
// factors, each in the exponent bits of a float: exp(-87.2) = 1.35e-38 and the subnormals below it down
// to exp(-103.9) = 1.4e-45 come out as the C library's expf gives them, and so does everything up to the
// largest float at exp(88.72). The last product rounds once.
struct ExpParts {
  float p;
  int32_t n;
};
[[gnu::always_inline]] inline ExpParts exp_parts(float xc) {
  // Adding 1.5·2^23 rounds x/ln2 to an integer and leaves it in the low mantissa bits of t.
  const float t = madd(xc, 1.44269504088896341f, 12582912.0f);
  const float n = t - 12582912.0f;
  // r = x - n·ln2, with ln2 split into a short head (exact product) and a tail (Cody and Waite).
  const float r = madd(n, 2.12194440e-4f, madd(n, -0.693359375f, xc));
  float p = 0.001383684459142387f;
  p = madd(p, r, 0.008374815806746483f);
  p = madd(p, r, 0.04166822507977486f);
  p = madd(p, r, 0.16666419804096222f);
  p = madd(p, r, 0.49999991059303284f);
  p = madd(p, r, 1.0f);
  p = madd(p, r, 1.0f);
  return {p, std::bit_cast<int32_t>(t) - 0x4B400000};
}

// 2^e for e in the normal exponents [-126, 127], built in the exponent bits.
[[gnu::always_inline]] inline float power_of_two(int32_t e) {
  return std::bit_cast<float>(static_cast<uint32_t>(e + 127) << 23);
}

// exp(x) for any float32, as the C library's expf: subnormal results below exp(-87.3), 0 below
// exp(-103.97) (so exp(-inf) = 0 as softmax wants), inf above exp(88.72); NaN propagates.
[[gnu::always_inline]] inline float fast_exp(float x) {
  // Clamp so the exponent arithmetic stays in range; NaN fails both tests and stays NaN.
  const auto [p, n] = exp_parts(x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x));
  const int32_t h = n >> 1;  // n in [-150, 128]: h and n - h both in [-75, 64]
  const float y = p * power_of_two(h) * power_of_two(n - h);
  return x < -104.0f ? 0.0f : (x > 89.0f ? std::numeric_limits<float>::infinity() : y);
}

// exp(x) for x <= 0, the argument softmax and cross-entropy have after subtracting the row maximum:
// without the overflow side, a third fewer instructions than fast_exp around the polynomial, for
// softmax's inner loop. Results below the smallest normal float (x < -87) are 0 here: a probability
// under 1.2e-38 next to a largest one of 1, which no loss can tell from 0, and building the subnormals
// as fast_exp does slows softmax down (measured: docs/conventions.md, "Float32 exp").
[[gnu::always_inline]] inline float fast_exp_nonpositive(float x) {
  const auto [p, n] = exp_parts(x < -87.0f ? -87.0f : x);
  const float y = p * power_of_two(n);
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
// formula with exp_parts.
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
  // e^2|x| for 2|x| >= 1.25 needs no subnormals, so 2^n is built in one factor (fast_exp's second costs
  // an LSTM step time); 2|x| > 88 gives inf, and 2/inf = 0 gives 1; NaN falls through and stays NaN.
  const float twice = 2.0f * a;
  const auto [q, n] = exp_parts(twice > 88.0f ? 88.0f : twice);
  const float far =
      1.0f - 2.0f / ((twice > 88.0f ? std::numeric_limits<float>::infinity() : q * power_of_two(n)) + 1.0f);
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

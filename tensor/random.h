// One seedable source of random numbers for everything in minigrad: parameter initialisation, dropout
// masks, data shuffling. The same seed gives the same numbers on every machine and with any thread count,
// because every draw happens on the calling thread in a fixed order. A Generator is not synchronised:
// use each from one thread at a time (the default generator is per thread, see below).
//
//   minigrad::manual_seed(42);
//   Tensor w = Tensor::normal({3, 4});          // from the default generator
//   Generator g(7); Tensor u = Tensor::uniform({5}, -1, 1, DType::Float32, &g);
#pragma once

#include <array>
#include <cstdint>

namespace minigrad {

// xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, fast, and its state is four integers,
// so a checkpoint can save and restore it exactly.
class Generator {
 public:
  using State = std::array<uint64_t, 4>;

  explicit Generator(uint64_t seed = 0) { seed_with(seed); }

  // Expands a 64-bit seed into the full state with splitmix64, as the xoshiro authors recommend.
  void seed_with(uint64_t seed);

  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1), with 53 random bits.
  double next_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Standard normal by the Box-Muller transform. The second value of each pair is discarded so that the
  // state alone (no cached value) determines what comes next.
  double next_normal();
  // Uniform integer in [0, n), without modulo bias.
  uint64_t next_below(uint64_t n);

  const State& state() const { return state_; }
  void set_state(const State& state) { state_ = state; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  State state_{};
};

// Counter-based random bits: a pure function of (seed, counter), splitmix64's mixing of the pair. Any
// thread can compute any element's bits in any order, so a kernel that draws them is the same with any
// thread count, and a backward pass can regenerate them from the seed instead of keeping them.
inline uint64_t counter_bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + (counter + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Inverted dropout's scale factors in one pass over counter-based bits: element i (in row-major order)
// is kept when 32 random bits (half of counter_bits(seed, i / 2)) are at or above p·2³², and a kept
// element is multiplied by 1/(1 - p), a dropped one by 0. apply computes dst[i] = src[i] · factor(i) for
// i in [first, first + n), and factors writes the factors themselves, for a caller that uses one mask
// twice: the same factors for the same seed and element index, whatever the caller's blocking. dst may
// be src.
struct DropoutMask {
  DropoutMask(double p, uint64_t seed)
      : seed(seed),
        threshold(p >= 1 ? 0 : static_cast<uint32_t>(p * 4294967296.0)),
        scale(p >= 1 ? 0 : 1 / (1 - p)),
        drop_all(p >= 1) {}

  template <typename T>
  void apply(const T* src, T* dst, int64_t first, int64_t n) const {
    for_each_factor<T>(first, n, [&](int64_t i, T factor) { dst[i] = src[i] * factor; });
  }
  template <typename T>
  void factors(T* dst, int64_t first, int64_t n) const {
    for_each_factor<T>(first, n, [&](int64_t i, T factor) { dst[i] = factor; });
  }

  uint64_t seed;
  uint32_t threshold;
  double scale;
  bool drop_all;

 private:
  // Calls out(i - first, factor(i)) for i in [first, first + n).
  template <typename T, typename Out>
  void for_each_factor(int64_t first, int64_t n, Out out) const {
    const T kept = static_cast<T>(scale);
    int64_t i = first;
    const int64_t end = first + n;
    if (i < end && (i & 1)) {  // an odd start: the second half of a pair
      out(0, factor<T>(i, kept));
      ++i;
    }
    // Whole pairs: one 64-bit draw for two elements (the loop the compiler vectorizes).
    const int64_t pairs = (end - i) / 2, offset = i - first;
    const uint64_t pair0 = static_cast<uint64_t>(i) / 2;
    for (int64_t j = 0; j < pairs; ++j) {
      const uint64_t bits = counter_bits(seed, pair0 + j);
      out(offset + 2 * j, !drop_all && static_cast<uint32_t>(bits) >= threshold ? kept : T(0));
      out(offset + 2 * j + 1, !drop_all && static_cast<uint32_t>(bits >> 32) >= threshold ? kept : T(0));
    }
    i += 2 * pairs;
    if (i < end) out(i - first, factor<T>(i, kept));
  }
  template <typename T>
  T factor(int64_t i, T kept) const {
    const uint64_t bits = counter_bits(seed, static_cast<uint64_t>(i) / 2);
    const uint32_t half = static_cast<uint32_t>((i & 1) ? bits >> 32 : bits);
    return !drop_all && half >= threshold ? kept : T(0);
  }
};

// The generator used when none is passed: one per thread, each seeded with 0 when the thread first uses
// it. (PyTorch has one global generator behind a lock; per thread, a model trained in its own thread
// gets the same numbers as when trained alone, whatever runs beside it.)
Generator& default_generator();
// Reseeds this thread's default generator.
void manual_seed(uint64_t seed);

}  // namespace minigrad

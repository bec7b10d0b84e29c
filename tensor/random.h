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

// The generator used when none is passed: one per thread, each seeded with 0 when the thread first uses
// it. (PyTorch has one global generator behind a lock; per thread, a model trained in its own thread
// gets the same numbers as when trained alone, whatever runs beside it.)
Generator& default_generator();
// Reseeds this thread's default generator.
void manual_seed(uint64_t seed);

}  // namespace minigrad

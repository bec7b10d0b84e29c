#include "minigrad/tensor/random.h"

#include <cmath>
#include <numbers>

namespace minigrad {

void Generator::seed_with(uint64_t seed) {
  uint64_t z = seed;
  for (uint64_t& word : state_) {
    z += 0x9e3779b97f4a7c15ULL;
    uint64_t x = z;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    word = x ^ (x >> 31);
  }
}

double Generator::next_normal() {
  // 1 - u lies in (0, 1], so the log is finite.
  const double u1 = 1.0 - next_double();
  const double u2 = next_double();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

uint64_t Generator::next_below(uint64_t n) {
  // Rejection sampling: draws that land in the incomplete last block of size n would favour small values.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % n;
}

Generator& default_generator() {
  // One per thread: two threads that build or train models side by side neither race on it nor take
  // each other's numbers, and each sees the sequence a single-threaded program would.
  thread_local Generator generator(0);
  return generator;
}

void manual_seed(uint64_t seed) {
  default_generator().seed_with(seed);
}

}  // namespace minigrad

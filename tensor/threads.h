// How many threads minigrad's kernels use, and the one helper that splits a loop across them.
//
// One setting drives both OpenMP (elementwise, reductions, softmax, layer norm) and OpenBLAS (matmul):
// the environment variable MINIGRAD_NUM_THREADS at start-up, or set_num_threads() at any time.
// Unset, it is the number of hardware threads.
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace minigrad {

int num_threads();
void set_num_threads(int n);

// Work below this many elements runs on the calling thread: waking a second thread costs about a
// microsecond, which is more than a small kernel takes.
inline constexpr int64_t kParallelGrain = 32768;

// Calls body(begin, end) on disjoint, contiguous pieces of [0, n), one per thread, in parallel when the
// work is large enough. `cost_per_item` scales the grain for items that are whole rows rather than
// single elements. body must not throw: validate before the loop.
template <typename Body>
void parallel_for(int64_t n, int64_t cost_per_item, Body&& body) {
  if (n <= 0) return;
  const int64_t work = n * std::max<int64_t>(cost_per_item, 1);
  const int threads = static_cast<int>(std::min<int64_t>({num_threads(), work / kParallelGrain, n}));
  if (threads <= 1) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num();
    body(n * t / threads, n * (t + 1) / threads);
  }
}

}  // namespace minigrad

// Timing helpers shared by the benchmark programs.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace minigrad::bench {

using Clock = std::chrono::steady_clock;

// The median of `values` (the upper one of the middle two for an even count); reorders `values`.
inline double median(std::vector<double>& values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// Seconds per call of f: runs f in batches of about `batch_seconds`, returns the median batch's average.
inline double seconds_per_call(const std::function<void()>& f, double batch_seconds, int batches) {
  f();  // warm up: page in buffers, start thread pools
  int reps = 1;
  for (;;) {  // size a batch
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) f();
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    if (t >= batch_seconds / 4 || reps > (1 << 24)) {
      reps = std::max(1, static_cast<int>(reps * batch_seconds / std::max(t, 1e-9)));
      break;
    }
    reps *= 4;
  }
  std::vector<double> per_call;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) f();
    per_call.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / reps);
  }
  return median(per_call);
}

}  // namespace minigrad::bench

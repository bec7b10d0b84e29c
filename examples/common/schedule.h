// The example programs' learning-rate schedule.
#pragma once

#include <algorithm>
#include <cstdint>

#include "minigrad/optim/schedule.h"

namespace examples {

// Linear warm-up over the fraction `warmup` of `total_steps`, then cosine decay to the last step.
inline minigrad::optim::WarmupCosine warmup_cosine(double lr, double warmup, int64_t total_steps) {
  return minigrad::optim::WarmupCosine(
      {.peak_lr = lr,
       .warmup_steps = static_cast<int64_t>(warmup * static_cast<double>(total_steps)),
       .total_steps = std::max<int64_t>(total_steps, 1) + 1});
}

}  // namespace examples

#include "minigrad/optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "minigrad/tensor/error.h"

namespace minigrad::optim {

WarmupCosine::WarmupCosine(const WarmupCosineOptions& o) : options(o) {
  if (o.warmup_steps < 0 || o.total_steps <= o.warmup_steps) {
    throw ValueError("WarmupCosine", "needs 0 <= warmup_steps < total_steps, got " +
                                         std::to_string(o.warmup_steps) + " and " +
                                         std::to_string(o.total_steps));
  }
  if (!(o.peak_lr >= 0 && o.final_lr >= 0 && o.final_lr <= o.peak_lr)) {
    throw ValueError("WarmupCosine", "needs 0 <= final_lr <= peak_lr");
  }
}

double WarmupCosine::at(int64_t step) const {
  if (step < 0) throw ValueError("WarmupCosine", "step must be non-negative, got " + std::to_string(step));
  if (step < options.warmup_steps) {
    return options.peak_lr * static_cast<double>(step) / static_cast<double>(options.warmup_steps);
  }
  const double progress = std::min(1.0, static_cast<double>(step - options.warmup_steps) /
                                            static_cast<double>(options.total_steps - options.warmup_steps));
  return options.final_lr +
         (options.peak_lr - options.final_lr) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
}

InverseSqrt::InverseSqrt(const InverseSqrtOptions& o) : options(o) {
  if (o.d_model <= 0 || o.warmup_steps <= 0 || !(o.factor > 0)) {
    throw ValueError("InverseSqrt", "d_model, warmup_steps and factor must be positive");
  }
}

double InverseSqrt::at(int64_t step) const {
  if (step < 0) throw ValueError("InverseSqrt", "step must be non-negative, got " + std::to_string(step));
  const double s = static_cast<double>(step + 1);
  return options.factor / std::sqrt(static_cast<double>(options.d_model)) *
         std::min(1 / std::sqrt(s), s * std::pow(static_cast<double>(options.warmup_steps), -1.5));
}

}  // namespace minigrad::optim

// Learning-rate schedules: the learning rate as a function of the step number (0, 1, 2, ...).
//
//   optim::WarmupCosine schedule({.peak_lr = 1e-3, .warmup_steps = 100, .total_steps = 1000});
//   for (int64_t step = 0; step < 1000; ++step) {
//     optimizer.set_learning_rate(schedule.at(step));
//     ...
#pragma once

#include <cstdint>

namespace minigrad::optim {

class Schedule {
 public:
  virtual ~Schedule() = default;
  virtual double at(int64_t step) const = 0;
};

struct WarmupCosineOptions {
  double peak_lr = 1e-3;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  double final_lr = 0;
};

// Linear warm-up from 0 to peak_lr over warmup_steps, then half a cosine down to final_lr at
// total_steps (and final_lr after), as Hugging Face's get_cosine_schedule_with_warmup:
//   step < warmup:  peak · step / warmup
//   otherwise:      final + (peak - final) · ½(1 + cos(π · progress)),  progress = (step - warmup) / (total -
//   warmup)
class WarmupCosine : public Schedule {
 public:
  explicit WarmupCosine(const WarmupCosineOptions& options);
  double at(int64_t step) const override;
  WarmupCosineOptions options;
};

struct InverseSqrtOptions {
  int64_t d_model = 512;
  int64_t warmup_steps = 4000;
  double factor = 1;
};

// Vaswani et al. (2017), section 5.3, with steps counted from 1 (step 0 here is their step 1):
//   lr = factor · d_model^-0.5 · min(s^-0.5, s · warmup^-1.5),  s = step + 1
// rising linearly for warmup_steps, then decaying as 1/√s.
class InverseSqrt : public Schedule {
 public:
  explicit InverseSqrt(const InverseSqrtOptions& options);
  double at(int64_t step) const override;
  InverseSqrtOptions options;
};

}  // namespace minigrad::optim

// An exponential moving average of the parameters (Polyak averaging, in the form of Polyak and Juditsky,
// 1992, as TensorFlow's ExponentialMovingAverage and PyTorch's AveragedModel with an EMA function):
//
//   optim::ExponentialMovingAverage ema(model.named_parameters(), {.decay = 0.999});
//   for (...) { ...; optimizer.step(); ema.update(); }
//   ema.swap();  // the model now holds the averages: evaluate or save it; swap() again to go back
//
// After each step, average ← d·average + (1 − d)·parameter. The average of the last ~1/(1 − d) steps
// sits nearer the middle of the valley the optimizer bounces across than any one step does, so it
// often generalizes a little better, at the cost of a copy of the weights.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {

struct ExponentialMovingAverageOptions {
  double decay = 0.999;
  // The decay of update n (from 1) is min(decay, (1 + n)/(10 + n)): the first updates average over few
  // steps, so that the random initial weights fade within tens of steps, not thousands.
  bool warmup = true;
};

class ExponentialMovingAverage {
 public:
  // The averages start as copies of the parameters' values.
  ExponentialMovingAverage(ParameterList parameters, const ExponentialMovingAverageOptions& options = {});

  // Moves each average towards its parameter's current value (call after each optimizer step).
  void update();
  // Exchanges the parameters' values with the averages: the model then computes with the averages.
  // Calling it again restores the training weights.
  void swap();

  int64_t updates() const { return updates_; }
  const std::vector<Tensor>& averages() const { return averages_; }

  // The averages as "NAME" tensors plus "updates", for a training-state file; load_state_tensors
  // restores them, checking every name and shape before changing anything.
  std::vector<std::pair<std::string, Tensor>> state_tensors() const;
  void load_state_tensors(const std::vector<std::pair<std::string, Tensor>>& tensors);

  ExponentialMovingAverageOptions options;

 private:
  std::vector<Variable> parameters_;
  std::vector<std::string> names_;
  std::vector<Tensor> averages_;
  int64_t updates_ = 0;
};

}  // namespace minigrad::optim

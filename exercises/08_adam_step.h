// Task 8: Adam's update as a custom optimizer. You write exercises/08_adam_step.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

struct MyAdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;    // how slowly the mean of the gradients moves
  double beta2 = 0.999;  // how slowly the mean of their squares moves
  double eps = 1e-8;
};

// Adam without weight decay, with the state optim::Adam keeps per parameter: "step", "exp_avg",
// "exp_avg_sq".
class MyAdam : public optim::Optimizer {
 public:
  MyAdam(optim::ParameterList parameters, const MyAdamOptions& options)
      : Optimizer(std::move(parameters), options.lr), options(options) {}
  void step() override;
  std::string name() const override { return "MyAdam"; }
  MyAdamOptions options;

 protected:
  std::vector<std::string> state_keys() const override { return {"step", "exp_avg", "exp_avg_sq"}; }
};

}  // namespace minigrad::exercises

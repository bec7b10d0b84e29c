// Pooling layers over (N, C, L) for Sequential: each forward is the function of the same name in
// autograd/functions.h (max_pool1d, avg_pool1d), and each prints as PyTorch's does.
//
//   nn::MaxPool1d pool({.kernel_size = 2});  // (N, C, L) -> (N, C, L / 2)
#pragma once

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/module.h"

namespace minigrad::nn {

class MaxPool1d : public Module {
 public:
  explicit MaxPool1d(MaxPool1dOptions options);
  Variable forward(const Variable& x) const;
  std::string name() const override { return "MaxPool1d"; }
  std::string extra_repr() const override;
  MaxPool1dOptions options;
};

class AvgPool1d : public Module {
 public:
  explicit AvgPool1d(AvgPool1dOptions options);
  Variable forward(const Variable& x) const;
  std::string name() const override { return "AvgPool1d"; }
  std::string extra_repr() const override;
  AvgPool1dOptions options;
};

}  // namespace minigrad::nn

// Pooling layers over (N, C, L) and (N, C, H, W) for Sequential: each forward is the function of the same
// name in autograd/functions.h (max_pool1d, avg_pool1d, max_pool2d, avg_pool2d, adaptive_avg_pool2d), and
// each prints as PyTorch's does.
//
//   nn::MaxPool1d pool({.kernel_size = 2});      // (N, C, L) -> (N, C, L / 2)
//   nn::MaxPool2d pool2({.kernel_size = 2});     // (N, C, H, W) -> (N, C, H / 2, W / 2)
//   nn::AdaptiveAvgPool2d global_average({1, 1});  // (N, C, H, W) -> (N, C, 1, 1)
#pragma once

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/module.h"

namespace minigrad::nn {

class MaxPool1d : public Layer<MaxPool1d> {
 public:
  explicit MaxPool1d(MaxPool1dOptions options);
  Variable forward(const Variable& x) const;
  std::string name() const override { return "MaxPool1d"; }
  std::string extra_repr() const override;
  MaxPool1dOptions options;
};

class AvgPool1d : public Layer<AvgPool1d> {
 public:
  explicit AvgPool1d(AvgPool1dOptions options);
  Variable forward(const Variable& x) const;
  std::string name() const override { return "AvgPool1d"; }
  std::string extra_repr() const override;
  AvgPool1dOptions options;
};

class MaxPool2d : public Layer<MaxPool2d> {
 public:
  explicit MaxPool2d(MaxPool2dOptions options);
  Variable forward(const Variable& x) const;
  std::string name() const override { return "MaxPool2d"; }
  std::string extra_repr() const override;
  MaxPool2dOptions options;
};

class AvgPool2d : public Layer<AvgPool2d> {
 public:
  explicit AvgPool2d(AvgPool2dOptions options);
  Variable forward(const Variable& x) const;
  std::string name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override;
  AvgPool2dOptions options;
};

class AdaptiveAvgPool2d : public Layer<AdaptiveAvgPool2d> {
 public:
  explicit AdaptiveAvgPool2d(Size2d output_size) : output_size(output_size) {}
  Variable forward(const Variable& x) const { return adaptive_avg_pool2d(x, output_size); }
  std::string name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override;
  Size2d output_size;
};

}  // namespace minigrad::nn

// Pooling layers over (N, C, L) and (N, C, H, W) for Sequential: each forward is the function of the same
// name in autograd/functions.h (max_pool1d, avg_pool1d, max_pool2d, avg_pool2d, adaptive_avg_pool2d), and
// each prints as PyTorch's does.
//
//   nn::MaxPool1d pool(2);                       // (N, C, L) -> (N, C, L / 2), as PyTorch's MaxPool1d(2)
//   nn::MaxPool2d pool2(2);                      // (N, C, H, W) -> (N, C, H / 2, W / 2)
//   nn::AvgPool2d pool3(3, {.stride = 1, .padding = 1});  // or all in one: ({.kernel_size = 3, ...})
//   nn::AdaptiveAvgPool2d global_average({1, 1});  // (N, C, H, W) -> (N, C, 1, 1)
#pragma once

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/positional_options.h"
#include "minigrad/nn/unbatched.h"

namespace minigrad::nn {

// The options are the functions' (max_pool1d and the rest, autograd/functions.h), by the names the
// layers are known by.
using MaxPool1dOptions = minigrad::MaxPool1dOptions;
using AvgPool1dOptions = minigrad::AvgPool1dOptions;
using MaxPool2dOptions = minigrad::MaxPool2dOptions;
using AvgPool2dOptions = minigrad::AvgPool2dOptions;

class MaxPool1d : public Layer<MaxPool1d> {
 public:
  explicit MaxPool1d(MaxPool1dOptions options);
  explicit MaxPool1d(int64_t kernel_size,
                     MaxPool1dOptions options = {});  // PyTorch's MaxPool1d(kernel_size, ...)
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      MaxPool1d, ConstructorLines<void(MaxPool1dOptions), void(int64_t), void(int64_t, MaxPool1dOptions)>,
      A...>
  explicit MaxPool1d(A&&...) : MaxPool1d(MaxPool1dOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::MaxPool1d takes (kernel_size), then {options}; or (MaxPool1dOptions)");
  }
  Variable forward(const Variable& x) const;
  std::string name() const override { return "MaxPool1d"; }
  std::string extra_repr() const override;
  MaxPool1dOptions options;
};

class AvgPool1d : public Layer<AvgPool1d> {
 public:
  explicit AvgPool1d(AvgPool1dOptions options);
  explicit AvgPool1d(int64_t kernel_size,
                     AvgPool1dOptions options = {});  // PyTorch's AvgPool1d(kernel_size, ...)
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      AvgPool1d, ConstructorLines<void(AvgPool1dOptions), void(int64_t), void(int64_t, AvgPool1dOptions)>,
      A...>
  explicit AvgPool1d(A&&...) : AvgPool1d(AvgPool1dOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::AvgPool1d takes (kernel_size), then {options}; or (AvgPool1dOptions)");
  }
  Variable forward(const Variable& x) const;
  std::string name() const override { return "AvgPool1d"; }
  std::string extra_repr() const override;
  AvgPool1dOptions options;
};

class MaxPool2d : public Layer<MaxPool2d> {
 public:
  explicit MaxPool2d(MaxPool2dOptions options);
  explicit MaxPool2d(Size2d kernel_size,
                     MaxPool2dOptions options = {});  // PyTorch's MaxPool2d(kernel_size, ...)
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      MaxPool2d, ConstructorLines<void(MaxPool2dOptions), void(Size2d), void(Size2d, MaxPool2dOptions)>, A...>
  explicit MaxPool2d(A&&...) : MaxPool2d(MaxPool2dOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::MaxPool2d takes (kernel_size), then {options}; or (MaxPool2dOptions)");
  }
  Variable forward(const Variable& x) const;
  std::string name() const override { return "MaxPool2d"; }
  std::string extra_repr() const override;
  MaxPool2dOptions options;
};

class AvgPool2d : public Layer<AvgPool2d> {
 public:
  explicit AvgPool2d(AvgPool2dOptions options);
  explicit AvgPool2d(Size2d kernel_size,
                     AvgPool2dOptions options = {});  // PyTorch's AvgPool2d(kernel_size, ...)
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      AvgPool2d, ConstructorLines<void(AvgPool2dOptions), void(Size2d), void(Size2d, AvgPool2dOptions)>, A...>
  explicit AvgPool2d(A&&...) : AvgPool2d(AvgPool2dOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::AvgPool2d takes (kernel_size), then {options}; or (AvgPool2dOptions)");
  }
  Variable forward(const Variable& x) const;
  std::string name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override;
  AvgPool2dOptions options;
};

class AdaptiveAvgPool2d : public Layer<AdaptiveAvgPool2d> {
 public:
  explicit AdaptiveAvgPool2d(Size2d output_size) : output_size(output_size) {}
  // Any other arguments: a compile error naming these (nn/constructor_lines.h). Two numbers are not
  // refused here: nn::AdaptiveAvgPool2d({1, 1}) offers them to every constructor too, on its way to Size2d.
  template <typename... A>
  requires NoConstructorTakes<AdaptiveAvgPool2d, ConstructorLines<void(Size2d), void(int64_t, int64_t)>, A...>
  explicit AdaptiveAvgPool2d(A&&...) : AdaptiveAvgPool2d(Size2d(1)) {
    static_assert(wrong_arguments<A...>,
                  "nn::AdaptiveAvgPool2d takes (output_size): a size, or {height, width}");
  }
  Variable forward(const Variable& x) const {
    return detail::as_batch_of_one(
        x, 4, [&](const Variable& batch) { return adaptive_avg_pool2d(batch, output_size); });
  }
  std::string name() const override { return "AdaptiveAvgPool2d"; }
  std::string extra_repr() const override;
  Size2d output_size;
};

}  // namespace minigrad::nn

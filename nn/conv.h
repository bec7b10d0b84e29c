// Conv1d and Conv2d: convolutions over (N, C_in, L) and (N, C_in, H, W), with PyTorch's semantics and
// names: weight (out_channels, in_channels / groups, kernel...), bias (out_channels), both initialised
// U(-1/√fan_in, 1/√fan_in) with fan_in = in_channels / groups · (the kernel's size) (PyTorch's
// kaiming_uniform with a = √5, and its bias rule).
//
//   nn::Conv1d conv({.in_channels = 64, .out_channels = 100, .kernel_size = 3, .padding_same = true});
//   Variable y = conv(x);  // (N, 64, L) -> (N, 100, L)
//   nn::Conv2d conv2({.in_channels = 1, .out_channels = 32, .kernel_size = 3, .padding = 1});
//   Variable z = conv2(images);  // (N, 1, 28, 28) -> (N, 32, 28, 28)
#pragma once

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/positional_options.h"

namespace minigrad::nn {

struct Conv1dOptions {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t kernel_size = 1;
  int64_t stride = 1;
  int64_t padding = 0;        // zeros on both sides
  bool padding_same = false;  // instead: the output as long as the input (stride 1)
  int64_t dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  // Where the initial weights are drawn from; nullptr: this thread's default generator. Not owned.
  Generator* generator = nullptr;
};

class Conv1d : public Layer<Conv1d> {
 public:
  explicit Conv1d(const Conv1dOptions& options);
  // PyTorch's Conv1d(in_channels, out_channels, kernel_size, ...): nn::Conv1d(4, 8, 3, {.padding = 1}).
  explicit Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, Conv1dOptions options = {});
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<Conv1d,
                              ConstructorLines<void(const Conv1dOptions&), void(int64_t, int64_t, int64_t),
                                               void(int64_t, int64_t, int64_t, Conv1dOptions)>,
                              A...>
  explicit Conv1d(A&&...) : Conv1d(Conv1dOptions{}) {
    static_assert(
        wrong_arguments<A...>,
        "nn::Conv1d takes (in_channels, out_channels, kernel_size), then {options}; or (Conv1dOptions)");
  }

  // x: (N, in_channels, L) -> (N, out_channels, L_out)
  Variable forward(const Variable& x) const;

  std::string name() const override { return "Conv1d"; }
  std::string extra_repr() const override;

  Variable weight;  // (out_channels, in_channels / groups, kernel_size)
  Variable bias;    // (out_channels), or undefined without bias
  Conv1dOptions options;
};

struct Conv2dOptions {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  Size2d kernel_size = 1;  // 3 for 3×3, {3, 5} for 3 high and 5 wide; stride, padding and dilation alike
  Size2d stride = 1;
  Size2d padding = 0;         // zeros on both sides of each axis
  bool padding_same = false;  // instead: the output the size of the input (stride 1)
  Size2d dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  // Where the initial weights are drawn from; nullptr: this thread's default generator. Not owned.
  Generator* generator = nullptr;
};

class Conv2d : public Layer<Conv2d> {
 public:
  explicit Conv2d(const Conv2dOptions& options);
  // PyTorch's Conv2d(in_channels, out_channels, kernel_size, ...): nn::Conv2d(1, 16, 3, {.padding = 1}).
  explicit Conv2d(int64_t in_channels, int64_t out_channels, Size2d kernel_size, Conv2dOptions options = {});
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<Conv2d,
                              ConstructorLines<void(const Conv2dOptions&), void(int64_t, int64_t, Size2d),
                                               void(int64_t, int64_t, Size2d, Conv2dOptions)>,
                              A...>
  explicit Conv2d(A&&...) : Conv2d(Conv2dOptions{}) {
    static_assert(
        wrong_arguments<A...>,
        "nn::Conv2d takes (in_channels, out_channels, kernel_size), then {options}; or (Conv2dOptions)");
  }

  // x: (N, in_channels, H, W) -> (N, out_channels, H_out, W_out)
  Variable forward(const Variable& x) const;

  std::string name() const override { return "Conv2d"; }
  std::string extra_repr() const override;

  Variable weight;  // (out_channels, in_channels / groups, kernel_size.h, kernel_size.w)
  Variable bias;    // (out_channels), or undefined without bias
  Conv2dOptions options;
};

}  // namespace minigrad::nn

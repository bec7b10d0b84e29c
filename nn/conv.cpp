#include "minigrad/nn/conv.h"

#include <cmath>

namespace minigrad::nn {

Conv1d::Conv1d(const Conv1dOptions& opts) : options(opts) {
  if (opts.in_channels <= 0 || opts.out_channels <= 0 || opts.kernel_size <= 0 || opts.groups <= 0) {
    throw ValueError("Conv1d", "in_channels, out_channels, kernel_size and groups must be positive, got " +
                                   std::to_string(opts.in_channels) + ", " +
                                   std::to_string(opts.out_channels) + ", " +
                                   std::to_string(opts.kernel_size) + ", " + std::to_string(opts.groups));
  }
  if (opts.in_channels % opts.groups != 0 || opts.out_channels % opts.groups != 0) {
    throw ValueError("Conv1d", "in_channels (" + std::to_string(opts.in_channels) + ") and out_channels (" +
                                   std::to_string(opts.out_channels) + ") must be divisible by groups (" +
                                   std::to_string(opts.groups) + ")");
  }
  const int64_t fan_in = opts.in_channels / opts.groups * opts.kernel_size;
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  weight = register_parameter(
      "weight", Tensor::uniform({opts.out_channels, opts.in_channels / opts.groups, opts.kernel_size}, -bound,
                                bound, DType::Float32, opts.generator));
  if (opts.bias) {
    bias = register_parameter(
        "bias", Tensor::uniform({opts.out_channels}, -bound, bound, DType::Float32, opts.generator));
  }
}

Variable Conv1d::forward(const Variable& x) const {
  if (!x.defined() || x.rank() != 3 || x.shape()[1] != options.in_channels) {
    throw ShapeError("Conv1d", "expects input (N, " + std::to_string(options.in_channels) + ", L), got " +
                                   (x.defined() ? x.shape().str() : std::string("an undefined Variable")));
  }
  try {
    return conv1d(x, weight, bias,
                  {.stride = options.stride,
                   .padding = options.padding,
                   .padding_same = options.padding_same,
                   .dilation = options.dilation,
                   .groups = options.groups});
  } catch (const ShapeError& e) {  // name the layer: the op's message has the shapes
    throw ShapeError("Conv1d", e.detail());
  }
}

std::string Conv1d::extra_repr() const {
  std::string s = std::to_string(options.in_channels) + ", " + std::to_string(options.out_channels) +
                  ", kernel_size=(" + std::to_string(options.kernel_size) + ",), stride=(" +
                  std::to_string(options.stride) + ",)";
  if (options.padding_same) {
    s += ", padding=same";
  } else if (options.padding != 0) {
    s += ", padding=(" + std::to_string(options.padding) + ",)";
  }
  if (options.dilation != 1) s += ", dilation=(" + std::to_string(options.dilation) + ",)";
  if (options.groups != 1) s += ", groups=" + std::to_string(options.groups);
  if (!options.bias) s += ", bias=False";
  return s;
}

}  // namespace minigrad::nn

#include "minigrad/nn/conv.h"

#include <cmath>

#include "minigrad/nn/unbatched.h"

namespace minigrad::nn {

namespace {

// What Conv1d and Conv2d check alike; returns the bound of the initial weights and bias, 1/√fan_in.
double check_and_bound(const char* layer, int64_t in_channels, int64_t out_channels, int64_t kernel_elements,
                       int64_t groups) {
  if (in_channels <= 0 || out_channels <= 0 || kernel_elements <= 0 || groups <= 0) {
    throw ValueError(layer, "in_channels, out_channels, kernel_size and groups must be positive, got " +
                                std::to_string(in_channels) + ", " + std::to_string(out_channels) + ", " +
                                std::to_string(kernel_elements) + " kernel element(s), " +
                                std::to_string(groups));
  }
  if (in_channels % groups != 0 || out_channels % groups != 0) {
    throw ValueError(layer, "in_channels (" + std::to_string(in_channels) + ") and out_channels (" +
                                std::to_string(out_channels) + ") must be divisible by groups (" +
                                std::to_string(groups) + ")");
  }
  return 1.0 / std::sqrt(static_cast<double>(in_channels / groups * kernel_elements));
}

// What the op would refuse at the first forward, refused when the layer is made (as PyTorch's constructor
// refuses padding='same' with a stride): for each axis, its stride, padding and dilation.
void check_axis(const char* layer, int64_t stride, int64_t padding, int64_t dilation, bool padding_same) {
  if (stride < 1 || dilation < 1 || padding < 0) {
    throw ValueError(layer, "stride and dilation must be positive and padding non-negative, got stride " +
                                std::to_string(stride) + ", padding " + std::to_string(padding) +
                                ", dilation " + std::to_string(dilation));
  }
  if (padding_same && stride != 1) {
    throw ValueError(layer, "padding 'same' needs stride 1, got stride " + std::to_string(stride));
  }
  if (padding_same && padding != 0) {
    throw ValueError(layer,
                     "padding 'same' replaces the padding, got padding " + std::to_string(padding) + " too");
  }
}

// Checks that x is (N, in_channels, <spatial>), of rank `rank`, then runs the op, naming the layer in a shape
// error (the op's message has the shapes).
template <typename Op>
Variable checked_forward(const char* layer, const Variable& x, int rank, int64_t in_channels,
                         const std::string& spatial, const Op& op) {
  const bool unbatched = x.defined() && x.rank() == rank - 1;  // (C, ...): a batch of one, as PyTorch
  if (!x.defined() || (x.rank() != rank && !unbatched) || x.shape()[unbatched ? 0 : 1] != in_channels) {
    throw ShapeError(layer, "expects input (N, " + std::to_string(in_channels) + ", " + spatial + ") or (" +
                                std::to_string(in_channels) + ", " + spatial + "), got " +
                                (x.defined() ? x.shape().str() : std::string("an undefined Variable")));
  }
  try {
    return detail::as_batch_of_one(x, rank, op);
  } catch (const ShapeError& e) {
    throw ShapeError(layer, e.detail());
  }
}

}  // namespace

namespace {

template <typename Options, typename Kernel>
Options with_positional(Options options, int64_t in_channels, int64_t out_channels, Kernel kernel_size,
                        const char* layer) {
  detail::set_positional(options, &Options::in_channels, in_channels, layer, "in_channels");
  detail::set_positional(options, &Options::out_channels, out_channels, layer, "out_channels");
  detail::set_positional(options, &Options::kernel_size, kernel_size, layer, "kernel_size");
  return options;
}

}  // namespace

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, Conv1dOptions options)
    : Conv1d(with_positional(options, in_channels, out_channels, kernel_size, "Conv1d")) {}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Size2d kernel_size, Conv2dOptions options)
    : Conv2d(with_positional(options, in_channels, out_channels, kernel_size, "Conv2d")) {}

Conv1d::Conv1d(const Conv1dOptions& opts) : options(opts) {
  const double bound =
      check_and_bound("Conv1d", opts.in_channels, opts.out_channels, opts.kernel_size, opts.groups);
  check_axis("Conv1d", opts.stride, opts.padding, opts.dilation, opts.padding_same);
  weight = register_parameter(
      "weight", Tensor::uniform({opts.out_channels, opts.in_channels / opts.groups, opts.kernel_size}, -bound,
                                bound, DType::Float32, opts.generator));
  if (opts.bias) {
    bias = register_parameter(
        "bias", Tensor::uniform({opts.out_channels}, -bound, bound, DType::Float32, opts.generator));
  }
}

Variable Conv1d::forward(const Variable& x) const {
  return checked_forward("Conv1d", x, 3, options.in_channels, "L", [&](const Variable& batch) {
    return conv1d(batch, weight, bias,
                  {.stride = options.stride,
                   .padding = options.padding,
                   .padding_same = options.padding_same,
                   .dilation = options.dilation,
                   .groups = options.groups});
  });
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

Conv2d::Conv2d(const Conv2dOptions& opts) : options(opts) {
  const Size2d k = opts.kernel_size;
  if (k.h <= 0 || k.w <= 0) {
    throw ValueError("Conv2d", "kernel_size must be positive, got (" + std::to_string(k.h) + ", " +
                                   std::to_string(k.w) + ")");
  }
  const double bound = check_and_bound("Conv2d", opts.in_channels, opts.out_channels, k.h * k.w, opts.groups);
  check_axis("Conv2d", opts.stride.h, opts.padding.h, opts.dilation.h, opts.padding_same);
  check_axis("Conv2d", opts.stride.w, opts.padding.w, opts.dilation.w, opts.padding_same);
  weight = register_parameter(
      "weight", Tensor::uniform({opts.out_channels, opts.in_channels / opts.groups, k.h, k.w}, -bound, bound,
                                DType::Float32, opts.generator));
  if (opts.bias) {
    bias = register_parameter(
        "bias", Tensor::uniform({opts.out_channels}, -bound, bound, DType::Float32, opts.generator));
  }
}

Variable Conv2d::forward(const Variable& x) const {
  return checked_forward("Conv2d", x, 4, options.in_channels, "H, W", [&](const Variable& batch) {
    return conv2d(batch, weight, bias,
                  {.stride = options.stride,
                   .padding = options.padding,
                   .padding_same = options.padding_same,
                   .dilation = options.dilation,
                   .groups = options.groups});
  });
}

std::string Conv2d::extra_repr() const {
  auto pair = [](Size2d s) { return "(" + std::to_string(s.h) + ", " + std::to_string(s.w) + ")"; };
  std::string s = std::to_string(options.in_channels) + ", " + std::to_string(options.out_channels) +
                  ", kernel_size=" + pair(options.kernel_size) + ", stride=" + pair(options.stride);
  if (options.padding_same) {
    s += ", padding=same";
  } else if (options.padding != Size2d(0)) {
    s += ", padding=" + pair(options.padding);
  }
  if (options.dilation != Size2d(1)) s += ", dilation=" + pair(options.dilation);
  if (options.groups != 1) s += ", groups=" + std::to_string(options.groups);
  if (!options.bias) s += ", bias=False";
  return s;
}

}  // namespace minigrad::nn

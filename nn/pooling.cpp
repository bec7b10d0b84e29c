#include "minigrad/nn/pooling.h"

#include <string>

#include "minigrad/nn/unbatched.h"

namespace minigrad::nn {

// Both take stride 0 to mean kernel_size, as PyTorch's stride=None; the layer stores the stride it uses.
namespace {

// The options with PyTorch's positional kernel_size written in.
template <typename Options, typename Kernel>
Options with_kernel(Options options, Kernel kernel_size, const char* layer) {
  detail::set_positional(options, &Options::kernel_size, kernel_size, layer, "kernel_size");
  return options;
}

}  // namespace

MaxPool1d::MaxPool1d(int64_t kernel_size, MaxPool1dOptions options)
    : MaxPool1d(with_kernel(options, kernel_size, "MaxPool1d")) {}
AvgPool1d::AvgPool1d(int64_t kernel_size, AvgPool1dOptions options)
    : AvgPool1d(with_kernel(options, kernel_size, "AvgPool1d")) {}
MaxPool2d::MaxPool2d(Size2d kernel_size, MaxPool2dOptions options)
    : MaxPool2d(with_kernel(options, kernel_size, "MaxPool2d")) {}
AvgPool2d::AvgPool2d(Size2d kernel_size, AvgPool2dOptions options)
    : AvgPool2d(with_kernel(options, kernel_size, "AvgPool2d")) {}

MaxPool1d::MaxPool1d(MaxPool1dOptions options_) : options(options_) {
  if (options.stride == 0) options.stride = options.kernel_size;
}

Variable MaxPool1d::forward(const Variable& x) const {
  return detail::as_batch_of_one(x, 3, [&](const Variable& batch) { return max_pool1d(batch, options); });
}

std::string MaxPool1d::extra_repr() const {
  return "kernel_size=" + std::to_string(options.kernel_size) + ", stride=" + std::to_string(options.stride) +
         ", padding=" + std::to_string(options.padding) + ", dilation=" + std::to_string(options.dilation) +
         ", ceil_mode=False";
}

AvgPool1d::AvgPool1d(AvgPool1dOptions options_) : options(options_) {
  if (options.stride == 0) options.stride = options.kernel_size;
}

Variable AvgPool1d::forward(const Variable& x) const {
  return detail::as_batch_of_one(x, 3, [&](const Variable& batch) { return avg_pool1d(batch, options); });
}

std::string AvgPool1d::extra_repr() const {
  return "kernel_size=(" + std::to_string(options.kernel_size) + ",), stride=(" +
         std::to_string(options.stride) + ",), padding=(" + std::to_string(options.padding) + ",)";
}

namespace {

// A size as PyTorch prints it: 2 when both axes agree, else (2, 3).
std::string printed(Size2d s) {
  return s.h == s.w ? std::to_string(s.h) : "(" + std::to_string(s.h) + ", " + std::to_string(s.w) + ")";
}

// Stride 0 on an axis means that axis's kernel size.
Size2d stride_or_kernel(Size2d stride, Size2d kernel) {
  return {stride.h != 0 ? stride.h : kernel.h, stride.w != 0 ? stride.w : kernel.w};
}

}  // namespace

MaxPool2d::MaxPool2d(MaxPool2dOptions options_) : options(options_) {
  options.stride = stride_or_kernel(options.stride, options.kernel_size);
}

Variable MaxPool2d::forward(const Variable& x) const {
  return detail::as_batch_of_one(x, 4, [&](const Variable& batch) { return max_pool2d(batch, options); });
}

std::string MaxPool2d::extra_repr() const {
  return "kernel_size=" + printed(options.kernel_size) + ", stride=" + printed(options.stride) +
         ", padding=" + printed(options.padding) + ", dilation=" + printed(options.dilation) +
         ", ceil_mode=False";
}

AvgPool2d::AvgPool2d(AvgPool2dOptions options_) : options(options_) {
  options.stride = stride_or_kernel(options.stride, options.kernel_size);
}

Variable AvgPool2d::forward(const Variable& x) const {
  return detail::as_batch_of_one(x, 4, [&](const Variable& batch) { return avg_pool2d(batch, options); });
}

std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + printed(options.kernel_size) + ", stride=" + printed(options.stride) +
         ", padding=" + printed(options.padding);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=" + printed(output_size);
}

}  // namespace minigrad::nn

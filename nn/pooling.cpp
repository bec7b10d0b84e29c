#include "minigrad/nn/pooling.h"

#include <string>

namespace minigrad::nn {

// Both take stride 0 to mean kernel_size, as PyTorch's stride=None; the layer stores the stride it uses.
MaxPool1d::MaxPool1d(MaxPool1dOptions options_) : options(options_) {
  if (options.stride == 0) options.stride = options.kernel_size;
}

Variable MaxPool1d::forward(const Variable& x) const {
  return max_pool1d(x, options);
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
  return avg_pool1d(x, options);
}

std::string AvgPool1d::extra_repr() const {
  return "kernel_size=(" + std::to_string(options.kernel_size) + ",), stride=(" +
         std::to_string(options.stride) + ",), padding=(" + std::to_string(options.padding) + ",)";
}

}  // namespace minigrad::nn

#include "minigrad/nn/linear.h"

#include <cmath>

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

Linear::Linear(const LinearOptions& opts) : options(opts) {
  if (opts.in_features <= 0 || opts.out_features <= 0) {
    throw ValueError("Linear", "in_features and out_features must be positive, got " +
                                   std::to_string(opts.in_features) + " and " +
                                   std::to_string(opts.out_features));
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(opts.in_features));
  weight = register_parameter("weight", Tensor::uniform({opts.out_features, opts.in_features}, -bound, bound,
                                                        DType::Float32, opts.generator));
  if (opts.bias) {
    bias = register_parameter(
        "bias", Tensor::uniform({opts.out_features}, -bound, bound, DType::Float32, opts.generator));
  }
}

Variable Linear::forward(const Variable& x) const {
  if (x.rank() < 1 || x.shape().back() != options.in_features) {
    throw ShapeError(
        "Linear", "expects input (..., " + std::to_string(options.in_features) + "), got " + x.shape().str());
  }
  // x·Wᵀ + b in one op: the transpose is a view, which BLAS reads with its transpose flag, and the bias is
  // the output's starting value, onto which BLAS adds the product.
  return linear(x, weight, bias);
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features) +
         ", out_features=" + std::to_string(options.out_features) +
         ", bias=" + (options.bias ? "True" : "False");
}

}  // namespace minigrad::nn

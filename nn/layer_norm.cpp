#include "minigrad/nn/layer_norm.h"

#include <cstdio>

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

LayerNorm::LayerNorm(int64_t size, double eps_) : normalized_size(size), eps(eps_) {
  if (size <= 0)
    throw ValueError("LayerNorm", "normalized_size must be positive, got " + std::to_string(size));
  weight = register_parameter("weight", Tensor::ones({size}));
  bias = register_parameter("bias", Tensor::zeros({size}));
}

Variable LayerNorm::forward(const Variable& x) const {
  return layer_norm(x, weight, bias, eps);
}

std::string LayerNorm::extra_repr() const {
  char eps_text[32];
  std::snprintf(eps_text, sizeof eps_text, "%g", eps);
  return "(" + std::to_string(normalized_size) + ",), eps=" + eps_text + ", elementwise_affine=True";
}

}  // namespace minigrad::nn

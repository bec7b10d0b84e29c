// LayerNorm over the last dimension, with a learnable scale (ones) and shift (zeros), eps 1e-5 as in
// PyTorch. The math is one fused op: autograd/layer_norm.cpp.
#pragma once

#include "minigrad/nn/module.h"

namespace minigrad::nn {

class LayerNorm : public Layer<LayerNorm> {
 public:
  explicit LayerNorm(int64_t normalized_size, double eps = 1e-5);
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<LayerNorm, ConstructorLines<void(int64_t), void(int64_t, double)>, A...>
  explicit LayerNorm(A&&...) : LayerNorm(1) {
    static_assert(wrong_arguments<A...>, "nn::LayerNorm takes (normalized_size) or (normalized_size, eps)");
  }

  // x: (..., normalized_size) -> same shape
  Variable forward(const Variable& x) const;

  std::string name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;

  Variable weight;  // (normalized_size), ones
  Variable bias;    // (normalized_size), zeros
  int64_t normalized_size;
  double eps;
};

}  // namespace minigrad::nn

// Linear: y = x·Wᵀ + b over the last dimension, with W of shape (out_features, in_features) as PyTorch
// stores it. Both are initialised U(-1/√in, 1/√in), PyTorch's default.
//
//   Linear fc(100, 10);                                                    // short form
//   Linear proj({.in_features = 100, .out_features = 100, .bias = false});  // options
#pragma once

#include "minigrad/nn/module.h"

namespace minigrad::nn {

struct LinearOptions {
  int64_t in_features = 0;
  int64_t out_features = 0;
  bool bias = true;
  // Where the initial weights are drawn from; nullptr: this thread's default generator. Not owned.
  Generator* generator = nullptr;
};

class Linear : public Layer<Linear> {
 public:
  explicit Linear(const LinearOptions& options);
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* generator = nullptr)
      : Linear(LinearOptions{in_features, out_features, bias, generator}) {}
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      Linear,
      ConstructorLines<void(const LinearOptions&), void(int64_t, int64_t), void(int64_t, int64_t, bool),
                       void(int64_t, int64_t, bool, Generator*)>,
      A...>
  explicit Linear(A&&...) : Linear(LinearOptions{}) {
    static_assert(
        wrong_arguments<A...>,
        "nn::Linear takes (in_features, out_features), then bias and a Generator*; or (LinearOptions)");
  }

  // x: (..., in_features) -> (..., out_features)
  Variable forward(const Variable& x) const;

  std::string name() const override { return "Linear"; }
  std::string extra_repr() const override;

  Variable weight;  // (out_features, in_features)
  Variable bias;    // (out_features), or undefined without bias
  LinearOptions options;
};

}  // namespace minigrad::nn

// Dropout: inverted dropout in training mode (see autograd/dropout.cpp), the identity in eval mode.
// Masks come from the default generator, so manual_seed() makes them repeatable.
#pragma once

#include "minigrad/nn/module.h"

namespace minigrad::nn {

class Dropout : public Layer<Dropout> {
 public:
  // Masks are drawn from `generator` (not owned), or from this thread's default generator.
  explicit Dropout(double p = 0.5, Generator* generator = nullptr);
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<Dropout, ConstructorLines<void(), void(double), void(double, Generator*)>, A...>
  explicit Dropout(A&&...) : Dropout() {
    static_assert(wrong_arguments<A...>, "nn::Dropout takes (), (p) or (p, Generator*)");
  }

  Variable forward(const Variable& x) const;

  std::string name() const override { return "Dropout"; }
  std::string extra_repr() const override;

  double p;
  Generator* generator;
};

// Dropout2d: whole channels of (N, C, H, W) zeroed in training (dropout2d), for convolutional features,
// whose neighbouring pixels are too alike for element-wise dropout to regularise.
class Dropout2d : public Layer<Dropout2d> {
 public:
  explicit Dropout2d(double p = 0.5, Generator* generator = nullptr);
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<Dropout2d, ConstructorLines<void(), void(double), void(double, Generator*)>,
                              A...>
  explicit Dropout2d(A&&...) : Dropout2d() {
    static_assert(wrong_arguments<A...>, "nn::Dropout2d takes (), (p) or (p, Generator*)");
  }

  Variable forward(const Variable& x) const;

  std::string name() const override { return "Dropout2d"; }
  std::string extra_repr() const override;

  double p;
  Generator* generator;
};

}  // namespace minigrad::nn

// Dropout: inverted dropout in training mode (see autograd/dropout.cpp), the identity in eval mode.
// Masks come from the default generator, so manual_seed() makes them repeatable.
#pragma once

#include "minigrad/nn/module.h"

namespace minigrad::nn {

class Dropout : public Layer<Dropout> {
 public:
  // Masks are drawn from `generator` (not owned), or from this thread's default generator.
  explicit Dropout(double p = 0.5, Generator* generator = nullptr);

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

  Variable forward(const Variable& x) const;

  std::string name() const override { return "Dropout2d"; }
  std::string extra_repr() const override;

  double p;
  Generator* generator;
};

}  // namespace minigrad::nn

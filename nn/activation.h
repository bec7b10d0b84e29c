// Activation functions as modules, for Sequential: each forward is the function of the same name in
// autograd/functions.h, and each prints as PyTorch's does ("ReLU()").
#pragma once

#include "nn/module.h"

namespace minigrad::nn {

class ReLU : public Module {
 public:
  Variable forward(const Variable& x) const;  // max(x, 0)
  std::string name() const override { return "ReLU"; }
};

class Tanh : public Module {
 public:
  Variable forward(const Variable& x) const;
  std::string name() const override { return "Tanh"; }
};

class Sigmoid : public Module {
 public:
  Variable forward(const Variable& x) const;  // 1 / (1 + e^-x)
  std::string name() const override { return "Sigmoid"; }
};

class GELU : public Module {
 public:
  Variable forward(const Variable& x) const;  // x·Φ(x), exact
  std::string name() const override { return "GELU"; }
};

}  // namespace minigrad::nn

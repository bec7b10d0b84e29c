// Task 7: a Linear layer as a custom module, and the training loop of plain SGD. You write
// exercises/07_linear_and_sgd.cpp.
#pragma once

#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::exercises {

// y = x·Wᵀ + b: x (batch, in_features) -> (batch, out_features), with its parameters registered as
// "weight" (out_features, in_features) and "bias" (out_features), both drawn from U(-1/√in, 1/√in).
class MyLinear : public nn::Layer<MyLinear> {
 public:
  // Draws from `generator`, or this thread's default generator when it is null.
  MyLinear(int64_t in_features, int64_t out_features, Generator* generator = nullptr);
  Variable forward(const Variable& x) const;
  std::string name() const override { return "MyLinear"; }

  Variable weight;  // (out_features, in_features)
  Variable bias;    // (out_features)
};

// `steps` steps of gradient descent on the whole batch, on the mean squared error between
// model(x) and y, each p ← p − lr·∂loss/∂p. Returns each step's loss, before its update.
std::vector<double> train_with_sgd(MyLinear& model, const Variable& x, const Variable& y, int steps,
                                   double lr);

}  // namespace minigrad::exercises

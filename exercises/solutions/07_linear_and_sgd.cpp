// Task 7's answer.
#include "exercises/07_linear_and_sgd.h"

#include <cmath>

namespace minigrad::exercises {

MyLinear::MyLinear(int64_t in_features, int64_t out_features, Generator* generator) {
  const double k = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight",
                              Tensor::uniform({out_features, in_features}, -k, k, DType::Float32, generator));
  bias = register_parameter("bias", Tensor::uniform({out_features}, -k, k, DType::Float32, generator));
}

Variable MyLinear::forward(const Variable& x) const {
  return matmul(x, transpose(weight, 0, 1)) + bias;  // (batch, in)·(in, out) + (out) -> (batch, out)
}

std::vector<double> train_with_sgd(MyLinear& model, const Variable& x, const Variable& y, int steps,
                                   double lr) {
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    const Variable loss = mse_loss(model(x), y);
    model.zero_grad();
    loss.backward();
    losses.push_back(loss.item());
    for (const Variable& p : model.parameters()) p.data().add_(p.grad(), -lr);
  }
  return losses;
}

}  // namespace minigrad::exercises

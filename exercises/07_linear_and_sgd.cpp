// Task 7: a Linear layer as a custom module, and a training loop with plain SGD.
//
// MyLinear (exercises/07_linear_and_sgd.h) is an nn::Module. In its constructor, register the two
// parameters and keep the handles register_parameter returns:
//   weight = register_parameter("weight", Tensor::uniform({out, in}, -k, k, DType::Float32, generator));
// with k = 1/√in_features (PyTorch's default), and the bias (out_features) the same way. forward(x) is
// x·Wᵀ + b for x (batch, in_features); the bias broadcasts over the batch.
//
// train_with_sgd runs `steps` steps, each:
//   the loss (mse_loss(model(x), y)), model.zero_grad(), loss.backward(), then for every
//   parameter p: p ← p − lr·p.grad(), in place on p.data() (tensor.add_(other, alpha) adds alpha·other).
// zero_grad first, or the gradients of earlier steps add up (task 4). Return each step's loss.item().
//
// Read first: examples/basics/custom_module.cpp, docs/writing-a-layer.md.
// The real ones: nn::Linear in nn/linear.cpp, optim::SGD in optim/optimizer.cpp.
// Check it: scripts/exercises.sh 7
#include "exercises/07_linear_and_sgd.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

MyLinear::MyLinear([[maybe_unused]] int64_t in_features, [[maybe_unused]] int64_t out_features,
                   [[maybe_unused]] Generator* generator) {
  throw NotWritten("task 7, MyLinear's constructor");
}

Variable MyLinear::forward([[maybe_unused]] const Variable& x) const {
  throw NotWritten("task 7, MyLinear::forward");
}

std::vector<double> train_with_sgd([[maybe_unused]] MyLinear& model, [[maybe_unused]] const Variable& x,
                                   [[maybe_unused]] const Variable& y, [[maybe_unused]] int steps,
                                   [[maybe_unused]] double lr) {
  throw NotWritten("task 7, train_with_sgd");
}

}  // namespace minigrad::exercises

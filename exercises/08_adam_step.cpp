// Task 8: one step of Adam, as a custom optimizer.
//
// MyAdam (exercises/08_adam_step.h) derives from optim::Optimizer, which holds the parameters
// (parameters_[i]), the learning rate (lr_) and a map of named state tensors per parameter (state_[i]).
// step() updates every parameter that has a gradient (skip one whose grad() is undefined: it took no
// part in the loss), with t its own count of steps:
//   m = β1·m + (1 − β1)·g          the running mean of the gradients  (state_[i]["exp_avg"])
//   v = β2·v + (1 − β2)·g²         ... and of their squares            (state_[i]["exp_avg_sq"])
//   p = p − lr · m̂ / (√v̂ + eps),   m̂ = m / (1 − β1^t),  v̂ = v / (1 − β2^t)
// m and v start at zeros of p's shape and dtype, and t (state_[i]["step"], an int64 scalar:
// Tensor::zeros({}, DType::Int64)) at 0, on the parameter's first step.
//
// To work out: why m̂ and v̂. Both start at 0, so after one step m = (1 − β1)·g: far too small. Dividing
// by 1 − β1^t undoes that bias, and matters less as t grows.
// Tools: tensor.mul_(s), tensor.add_(other, alpha), mul, div, sqrt and add(t, s) on Tensors; write into
// p.data() in place. Run with NoGradGuard no_grad; so that nothing is recorded.
//
// The real one: optim::Adam::step in optim/optimizer.cpp.
// Check it: scripts/exercises.sh 8
#include "exercises/08_adam_step.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

void MyAdam::step() {
  throw NotWritten("task 8, MyAdam::step");
}

}  // namespace minigrad::exercises

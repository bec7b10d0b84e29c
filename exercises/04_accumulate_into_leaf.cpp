// Task 4: accumulation into a leaf.
//
// When a gradient reaches a leaf (a parameter), the engine adds it into the leaf's .grad. The tests run
// minigrad's own backward pass with this function as its last step, so that every gradient that reaches
// a leaf comes here.
//
// To get right:
//   - a leaf used twice (x * x, or x in two places) gets one call per use, and its gradient is the sum
//     of the calls (the multivariable chain rule);
//   - a second backward() before zero_grad() adds to what the first one left, as in PyTorch
//     (gradient accumulation over micro-batches relies on it);
//   - leaf.grad() is undefined (leaf.grad().defined() is false) before the first call;
//   - `g` may be shared: add() hands the same gradient tensor to both of its inputs. The leaf's .grad
//     must be a buffer of its own (g.clone()), or changing one leaf's gradient in place (an optimizer,
//     clip_grad_norm_, a second backward) changes the other's too.
// Tools: leaf.grad(), leaf.set_grad(tensor), tensor.clone(), tensor.add_(other) (in place), add(a, b).
//
// The real one: accumulate_into_leaf in autograd/engine.cpp (step 3 of the backward pass).
// Check it: scripts/exercises.sh 4
#include "exercises/04_accumulate_into_leaf.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

void accumulate_into_leaf([[maybe_unused]] const Variable& leaf, [[maybe_unused]] const Tensor& g) {
  throw NotWritten("task 4, accumulate_into_leaf");
}

}  // namespace minigrad::exercises

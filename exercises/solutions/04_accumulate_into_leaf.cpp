// Task 4's answer.
#include "exercises/04_accumulate_into_leaf.h"

namespace minigrad::exercises {

void accumulate_into_leaf(const Variable& leaf, const Tensor& g) {
  if (!leaf.grad().defined()) {
    leaf.set_grad(g.clone());  // a buffer of its own: g may also be another input's gradient
  } else {
    leaf.grad().add_(g);  // d loss / d leaf is the sum over its uses, and over backward() calls
  }
}

}  // namespace minigrad::exercises

// Task 2: the reduction a broadcast needs, sum_to.
//
// add(a, b) with a (2, 3, 4) and b (3, 1) repeats b along dim 0 (a leading dim b lacks) and along its
// last dim (size 1 against 4). Each repeated copy of b[j] adds to the loss, so d loss / d b[j] is the sum
// of the output's gradient over every place b[j] was copied to. my_sum_to(g, b.shape()) is that sum: it
// takes a tensor of the broadcast shape back down to `shape`.
//
// To work out: which dims of x to sum over, for x of rank r and `shape` of rank s <= r:
//   - the r - s leading dims, which `shape` lacks;
//   - each later dim d where shape[d - (r - s)] is 1 and x's size is not.
// sum(x, dims, /*keepdim=*/true) sums over a list of dims and keeps them as 1s; reshape(y, shape) then
// drops the leading ones. Return x itself when there is nothing to sum. Use ops on Variables, so that
// my_sum_to is differentiable (its own gradient is a broadcast back: expand).
//
// The real one: sum_to in tensor/reduce.cpp (the kernel) and autograd/shape_ops.cpp (the op); every
// broadcasting op's backward calls it (add, mul, ... in autograd/arithmetic.cpp).
// Check it: scripts/exercises.sh 2
#include "exercises/02_sum_to.h"

#include "exercises/not_written.h"

namespace minigrad::exercises {

Variable my_sum_to([[maybe_unused]] const Variable& x, [[maybe_unused]] const Shape& shape) {
  throw NotWritten("task 2, my_sum_to");
}

}  // namespace minigrad::exercises

// Task 2's answer.
#include "exercises/02_sum_to.h"

namespace minigrad::exercises {

Variable my_sum_to(const Variable& x, const Shape& shape) {
  const int leading = x.rank() - shape.rank();  // dims of x that `shape` lacks
  Shape dims;
  for (int d = 0; d < x.rank(); ++d) {
    if (d < leading || (shape[d - leading] == 1 && x.shape()[d] != 1)) dims.push_back(d);
  }
  if (dims.empty()) return x;
  // keepdim leaves 1s where it summed; reshape drops the leading ones.
  return reshape(sum(x, dims, /*keepdim=*/true), shape);
}

}  // namespace minigrad::exercises

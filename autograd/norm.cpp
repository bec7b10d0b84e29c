// The p-norm as a differentiable op: its value from the kernel (tensor/reduce.h), its gradient written
// with differentiable ops, so that it has a gradient of its own.
//   d‖x‖/dx = sign(x)·|x|^(p-1) / ‖x‖^(p-1)   (x/‖x‖ for p = 2, sign(x) for p = 1), 0 where ‖x‖ = 0
//   p = inf: sign(x) at the elements of the largest |x|, shared evenly between them; 0 elsewhere
#include <cmath>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

namespace {

// `y` reduced over `dims` without keepdim, with those dimensions put back as size 1 so that it broadcasts
// against the input of shape `from`.
Variable unreduced(const Variable& y, const Shape& from, const Shape& dims, bool keepdim) {
  if (keepdim) return y;
  Shape shape = from;
  for (int64_t d : dims) shape[static_cast<int>(d < 0 ? d + from.rank() : d)] = 1;
  return reshape(y, shape);
}

// d‖x‖/dx, x's shape: the gradient's and the tangent's one computation.
Variable norm_slope(const Variable& x, double p, const Shape& dims) {
  const Variable sign_of_x(sign(x.data()));  // a constant: its slope is 0
  if (std::isinf(p)) {
    // The elements at the norm share the slope: a mask over their count (0 if the norm is 0, where the
    // mask would hold every element).
    const Tensor y = norm(x.data(), p, dims, true);
    const Tensor at_max = eq(abs(x.data()), y).to(x.dtype());
    const Tensor share = masked_fill(div(at_max, sum(at_max, dims, true)), eq(y, 0.0), 0.0);
    return mul(sign_of_x, Variable(share));
  }
  // sign(x)·|x|^(p-1) · ‖x‖^(1-p), the norm computed again as a Variable so that the slope has a
  // derivative; where it is 0 the slope is 0.
  const Variable y = norm(x, p, dims, true);
  const Variable scale = masked_fill(pow(y, 1 - p), eq(y.data(), 0.0), 0.0);
  const Variable direction = p == 2 ? x : p == 1 ? sign_of_x : mul(sign_of_x, pow(abs(x), p - 1));
  return mul(direction, scale);
}

}  // namespace

Variable norm(const Variable& x, double p, const Shape& dims, bool keepdim) {
  return record(
      "norm", norm(x.data(), p, dims, keepdim), {x},
      [sx = SavedTensor(x), p, dims, keepdim](const Variable& g, NeedsGrad) -> VariableGrads {
        const Variable in = sx.variable();
        return {mul(unreduced(g, in.shape(), dims, keepdim), norm_slope(in, p, dims))};
      },
      [&](const Tangents& t) { return sum(norm_slope(x, p, dims) * t[0], dims, keepdim); });
}

Variable norm(const Variable& x, double p) {
  Shape all_dims;
  for (int64_t d = 0; d < x.rank(); ++d) all_dims.push_back(d);
  return x.rank() == 0 ? norm(reshape(x, {1}), p, {0}) : norm(x, p, all_dims);
}

}  // namespace minigrad

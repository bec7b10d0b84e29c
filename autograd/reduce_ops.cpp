// Reductions. Every input element contributes to one output element, so its gradient is that output's
// gradient: broadcast back over the reduced dimensions (scaled by 1/count for mean), or, for max, routed
// to the one element that was the maximum.
#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

namespace {

// The input's shape with each reduced dim set to 1: what keepdim=true would have produced.
Shape kept_shape(const Shape& shape, const Shape& dims) {
  Shape kept = shape;
  for (int64_t d : dims) kept[normalize_dim("sum", d, shape.rank())] = 1;
  return kept;
}

// The output gradient spread back over an input of shape `from` (a stride-0 view: no copy).
Variable spread(const Variable& g, const Shape& kept, const Shape& from) {
  return expand(reshape(g, kept), from);
}

}  // namespace

Variable max_backward(const Variable& g, const Tensor& indices, const Shape& from, int64_t dim) {
  // Linear in g; its gradient picks each output's share back out of gg at the same positions: the sum
  // over `dim` of gg times the one-hot mask of the maxima.
  return record("max_backward", max_backward(g.data(), indices, from, dim), {g},
                [si = SavedTensor(indices), from, dim, g_shape = g.shape()](const Variable& gg,
                                                                            NeedsGrad) -> VariableGrads {
                  const Tensor& idx = si.get();
                  const Tensor one_hot = max_backward(Tensor::ones(idx.shape(), gg.dtype()), idx, from, dim);
                  return {reshape(sum(mul(gg, Variable(one_hot)), {dim}, /*keepdim=*/true), g_shape)};
                });
}

Variable sum(const Variable& x, const Shape& dims, bool keepdim) {
  return record("sum", sum(x.data(), dims, keepdim), {x},
                [from = x.shape(), kept = kept_shape(x.shape(), dims)](
                    const Variable& g, NeedsGrad) -> VariableGrads { return {spread(g, kept, from)}; });
}

Variable sum(const Variable& x) {
  return record("sum", sum(x.data()), {x}, [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads {
    return {expand(g, from)};
  });
}

Variable mean(const Variable& x, const Shape& dims, bool keepdim) {
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[normalize_dim("mean", d, x.rank())];
  return record("mean", mean(x.data(), dims, keepdim), {x},
                [from = x.shape(), kept = kept_shape(x.shape(), dims), count](const Variable& g, NeedsGrad)
                    -> VariableGrads { return {spread(div(g, double(count)), kept, from)}; });
}

Variable mean(const Variable& x) {
  return record("mean", mean(x.data()), {x},
                [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads {
                  return {expand(div(g, double(from.numel())), from)};
                });
}

Variable max(const Variable& x, int64_t dim, bool keepdim) {
  const int d = normalize_dim("max", dim, x.rank());
  const SavedTensor indices(argmax(x.data(), d, /*keepdim=*/true));  // [..., 1, ...]
  const Tensor values = max(x.data(), d, keepdim);
  // Route each output gradient to the position its maximum came from; every other position gets 0.
  return record("max", values, {x},
                [from = x.shape(), d, indices](const Variable& g, NeedsGrad) -> VariableGrads {
                  return {max_backward(g, indices.get(), from, d)};
                });
}

}  // namespace minigrad

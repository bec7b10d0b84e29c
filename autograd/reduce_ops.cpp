// Reductions. Every input element contributes to one output element, so its gradient is that output's
// gradient: broadcast back over the reduced dimensions (scaled by 1/count for mean), or, for max and min,
// routed to the element that was selected.
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

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
  return record(
      "max_backward", max_backward(g.data(), indices, from, dim), {g},
      [si = SavedTensor(indices), from, dim, g_shape = g.shape()](const Variable& gg,
                                                                  NeedsGrad) -> VariableGrads {
        const Tensor& idx = si.get();
        const Tensor one_hot = max_backward(Tensor::ones(idx.shape(), gg.dtype()), idx, from, dim);
        return {reshape(sum(mul(gg, Variable(one_hot)), {dim}, /*keepdim=*/true), g_shape)};
      },
      [&](const Tangents& t) { return max_backward(t[0], indices, from, dim); });
}

Variable sum(const Variable& x, const Shape& dims, bool keepdim) {
  return record(
      "sum", sum(x.data(), dims, keepdim), {x},
      [from = x.shape(), kept = kept_shape(x.shape(), dims)](const Variable& g, NeedsGrad) -> VariableGrads {
        return {spread(g, kept, from)};
      },
      [&](const Tangents& t) { return sum(t[0], dims, keepdim); });
}

Variable sum(const Variable& x) {
  return record(
      "sum", sum(x.data()), {x},
      [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads { return {expand(g, from)}; },
      [](const Tangents& t) { return sum(t[0]); });
}

Variable mean(const Variable& x, const Shape& dims, bool keepdim) {
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[normalize_dim("mean", d, x.rank())];
  return record(
      "mean", mean(x.data(), dims, keepdim), {x},
      [from = x.shape(), kept = kept_shape(x.shape(), dims), count](const Variable& g, NeedsGrad)
          -> VariableGrads { return {spread(div(g, double(count)), kept, from)}; },
      [&](const Tangents& t) { return mean(t[0], dims, keepdim); });
}

Variable mean(const Variable& x) {
  return record(
      "mean", mean(x.data()), {x},
      [from = x.shape()](const Variable& g, NeedsGrad) -> VariableGrads {
        return {expand(div(g, double(from.numel())), from)};
      },
      [](const Tangents& t) { return mean(t[0]); });
}

namespace {

// max or min along dim: the values, with each output gradient routed back to the position its value came
// from (the first of ties, the first NaN if there is one); every other position gets 0.
template <typename Values, typename Indices>
Variable extreme_along(const char* op, const Variable& x, int64_t dim, bool keepdim, Values values,
                       Indices indices_of) {
  const int d = normalize_dim(op, dim, x.rank());
  const SavedTensor indices(indices_of(x.data(), d, /*keepdim=*/true));  // [..., 1, ...]
  return record(
      op, values(x.data(), d, keepdim), {x},
      [from = x.shape(), d, indices](const Variable& g, NeedsGrad) -> VariableGrads {
        return {max_backward(g, indices.get(), from, d)};
      },
      [&](const Tangents& t) {  // ẋ at the selected positions
        const Tensor& idx = indices.get();
        const Tensor one_hot = max_backward(Tensor::ones(idx.shape(), x.dtype()), idx, x.shape(), d);
        return sum(t[0] * Variable(one_hot), {d}, keepdim);
      });
}

// max or min over the whole tensor: the gradient shared by every element equal to the value, as PyTorch.
Variable extreme(const char* op, const Variable& x, const Tensor& value) {
  return record(
      op, value, {x},
      [sx = SavedTensor(x), value](const Variable& g, NeedsGrad) -> VariableGrads {
        const Tensor share = extreme_shares(sx.get(), value);  // constant: linear in g
        return {mul(expand(g, share.shape()), Variable(share))};
      },
      [&](const Tangents& t) { return sum(t[0] * Variable(extreme_shares(x.data(), value))); });
}

}  // namespace

Variable max(const Variable& x, int64_t dim, bool keepdim) {
  return extreme_along(
      "max", x, dim, keepdim, [](const Tensor& t, int64_t d, bool k) { return max(t, d, k); },
      [](const Tensor& t, int64_t d, bool k) { return argmax(t, d, k); });
}

Variable min(const Variable& x, int64_t dim, bool keepdim) {
  return extreme_along(
      "min", x, dim, keepdim, [](const Tensor& t, int64_t d, bool k) { return min(t, d, k); },
      [](const Tensor& t, int64_t d, bool k) { return argmin(t, d, k); });
}

Variable max(const Variable& x) {
  if (!x.defined()) throw ValueError("max", "the Variable is undefined");
  return extreme("max", x, max(x.data()));
}

Variable min(const Variable& x) {
  if (!x.defined()) throw ValueError("min", "the Variable is undefined");
  return extreme("min", x, min(x.data()));
}

}  // namespace minigrad

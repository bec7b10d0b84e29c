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
Tensor spread(const Tensor& g, const Shape& kept, const Shape& from) {
  return g.reshape(kept).expand(from);
}

}  // namespace

Variable sum(const Variable& x, const Shape& dims, bool keepdim) {
  return record("sum", sum(x.data(), dims, keepdim), {x},
                [from = x.shape(), kept = kept_shape(x.shape(), dims)](const Tensor& g, NeedsGrad) -> Grads {
                  return {spread(g, kept, from)};
                });
}

Variable sum(const Variable& x) {
  return record("sum", sum(x.data()), {x},
                [from = x.shape()](const Tensor& g, NeedsGrad) -> Grads { return {g.expand(from)}; });
}

Variable mean(const Variable& x, const Shape& dims, bool keepdim) {
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[normalize_dim("mean", d, x.rank())];
  return record(
      "mean", mean(x.data(), dims, keepdim), {x},
      [from = x.shape(), kept = kept_shape(x.shape(), dims), count](const Tensor& g, NeedsGrad) -> Grads {
        return {spread(div(g, double(count)), kept, from)};
      });
}

Variable mean(const Variable& x) {
  return record("mean", mean(x.data()), {x}, [from = x.shape()](const Tensor& g, NeedsGrad) -> Grads {
    return {div(g, double(from.numel())).expand(from)};
  });
}

Variable max(const Variable& x, int64_t dim, bool keepdim) {
  const int d = normalize_dim("max", dim, x.rank());
  const Tensor indices = argmax(x.data(), d, /*keepdim=*/true);  // [..., 1, ...]
  const Tensor values = max(x.data(), d, keepdim);
  return record("max", values, {x}, [from = x.shape(), d, indices](const Tensor& g, NeedsGrad) -> Grads {
    // Route each output gradient to the position its maximum came from; every other position gets 0.
    Tensor gx = Tensor::zeros(from, g.dtype());
    const Tensor gk = g.reshape(indices.shape()).contiguous();
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < d; ++k) outer *= from[k];
    for (int k = d + 1; k < from.rank(); ++k) inner *= from[k];
    const int64_t n = from[d];
    const int64_t* idx = indices.data_ptr<const int64_t>();
    dispatch_float(g.dtype(), "max_backward", [&]<typename T>() {
      const T* pg = gk.data_ptr<const T>();
      T* px = gx.data_ptr<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) px[(o * n + idx[o * inner + i]) * inner + i] = pg[o * inner + i];
      }
    });
    return {gx};
  });
}

}  // namespace minigrad

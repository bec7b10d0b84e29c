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
template <typename G>
G spread(const G& g, const Shape& kept, const Shape& from) {
  return expand(reshape(g, kept), from);
}

// A one-hot routing of each output position to the position its maximum came from: 1 there, 0
// elsewhere, times the output gradient `g` (shape `indices.shape()`).
Tensor route_to_argmax(const Tensor& g, const Tensor& indices, const Shape& from, int d) {
  Tensor gx = Tensor::zeros(from, g.dtype());
  const Tensor gk = g.reshape(indices.shape()).contiguous();
  const auto [outer, n, inner] = split_around(from, d);
  const int64_t* idx = indices.data_ptr<const int64_t>();
  dispatch_float(g.dtype(), "max_backward", [&]<typename T>() {
    const T* pg = gk.data_ptr<const T>();
    T* px = gx.data_ptr<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) px[(o * n + idx[o * inner + i]) * inner + i] = pg[o * inner + i];
    }
  });
  return gx;
}

}  // namespace

Variable sum(const Variable& x, const Shape& dims, bool keepdim) {
  return record("sum", sum(x.data(), dims, keepdim), {x},
                [from = x.shape(), kept = kept_shape(x.shape(), dims)]<typename G>(const G& g, NeedsGrad) {
                  return GradsOf<G>{spread(g, kept, from)};
                });
}

Variable sum(const Variable& x) {
  return record("sum", sum(x.data()), {x}, [from = x.shape()]<typename G>(const G& g, NeedsGrad) {
    return GradsOf<G>{expand(g, from)};
  });
}

Variable mean(const Variable& x, const Shape& dims, bool keepdim) {
  int64_t count = 1;
  for (int64_t d : dims) count *= x.shape()[normalize_dim("mean", d, x.rank())];
  return record("mean", mean(x.data(), dims, keepdim), {x},
                [from = x.shape(), kept = kept_shape(x.shape(), dims), count]<typename G>(
                    const G& g, NeedsGrad) { return GradsOf<G>{spread(div(g, double(count)), kept, from)}; });
}

Variable mean(const Variable& x) {
  return record("mean", mean(x.data()), {x}, [from = x.shape()]<typename G>(const G& g, NeedsGrad) {
    return GradsOf<G>{expand(div(g, double(from.numel())), from)};
  });
}

Variable max(const Variable& x, int64_t dim, bool keepdim) {
  const int d = normalize_dim("max", dim, x.rank());
  const SavedTensor indices(argmax(x.data(), d, /*keepdim=*/true));  // [..., 1, ...]
  const Tensor values = max(x.data(), d, keepdim);
  // Route each output gradient to the position its maximum came from; every other position gets 0.
  return record("max", values, {x},
                Backward{[from = x.shape(), d, indices](const Tensor& g, NeedsGrad) -> Grads {
                           return {route_to_argmax(g, indices.get(), from, d)};
                         },
                         [from = x.shape(), d, indices](const Variable& g, NeedsGrad) -> VariableGrads {
                           // The same routing as a product with a constant one-hot mask: linear in g.
                           const Tensor& idx = indices.get();
                           const Tensor one_hot =
                               route_to_argmax(Tensor::ones(idx.shape(), g.dtype()), idx, from, d);
                           return {mul(spread(g, idx.shape(), from), Variable(one_hot))};
                         }});
}

}  // namespace minigrad

// Inverted dropout: in training each element is kept with probability 1-p and scaled by 1/(1-p), so the
// expected value is unchanged and evaluation needs no rescaling. The backward pass applies the same
// scaled mask to the gradient.
#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable dropout(const Variable& x, double p, bool training, Generator* generator) {
  if (!(p >= 0 && p <= 1)) throw ValueError("dropout", "p must be in [0, 1], got " + std::to_string(p));
  if (!x.defined()) throw ValueError("dropout", "the Variable is undefined");
  if (!training || p == 0) return x;
  // keep / (1 - p), or all zeros when p = 1
  const Tensor keep = Tensor::bernoulli(x.shape(), 1 - p, generator).to(x.dtype());
  const Tensor scale = p == 1 ? keep : mul(keep, 1.0 / (1 - p));
  return record("dropout", mul(x.data(), scale), {x},
                [scale](const Tensor& g, NeedsGrad) -> Grads { return {mul(g, scale)}; });
}

}  // namespace minigrad

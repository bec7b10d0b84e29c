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
  // 1/(1 - p) where kept, 0 where dropped (all zeros when p = 1)
  const Tensor keep = Tensor::bernoulli(x.shape(), 1 - p, generator);
  const Tensor scale =
      where(keep, Tensor::scalar(p == 1 ? 0.0 : 1.0 / (1 - p), x.dtype()), Tensor::scalar(0, x.dtype()));
  return record("dropout", mul(x.data(), scale), {x},
                [ss = SavedTensor(scale)]<typename G>(const G& g, NeedsGrad) {
                  return GradsOf<G>{mul(g, ss.as<G>())};  // the scale is a constant: dropout is linear in x
                });
}

}  // namespace minigrad

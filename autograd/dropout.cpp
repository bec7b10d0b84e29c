// Inverted dropout: in training each element is kept with probability 1-p and scaled by 1/(1-p), so the
// expected value is unchanged and evaluation needs no rescaling. The backward pass applies the same
// scaled mask to the gradient. The mask is never stored: it is a function of one seed (see below).
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Variable dropout(const Variable& x, double p, bool training, Generator* generator) {
  if (!(p >= 0 && p <= 1)) throw ValueError("dropout", "p must be in [0, 1], got " + std::to_string(p));
  if (!x.defined()) throw ValueError("dropout", "the Variable is undefined");
  if (!training || p == 0) return x;
  // One draw from the generator seeds the whole mask (tensor/random.h): the elements' bits are a function
  // of the seed and their index, so backward regenerates the mask instead of keeping it.
  const uint64_t seed = (generator != nullptr ? *generator : default_generator()).next_u64();
  return dropout_with_seed(x, p, seed);
}

Variable dropout_with_seed(const Variable& x, double p, uint64_t seed) {
  return record(
      "dropout", dropout(x.data(), p, seed), {x},
      [p, seed](const Variable& g, NeedsGrad) -> VariableGrads {
        return {dropout_with_seed(g, p, seed)};  // linear in x: the same mask on the gradient
      },
      [p, seed](const Tangents& t) { return dropout_with_seed(t[0], p, seed); });
}

Variable dropout2d(const Variable& x, double p, bool training, Generator* generator) {
  if (!(p >= 0 && p <= 1)) throw ValueError("dropout2d", "p must be in [0, 1], got " + std::to_string(p));
  if (!x.defined() || x.rank() != 4) {
    throw ShapeError("dropout2d",
                     "expects (N, C, H, W), got " + (x.defined() ? x.shape().str() : "undefined"));
  }
  if (!training || p == 0) return x;
  // Whole channels: one draw per channel of each example, a mask (N, C, 1, 1) of 0 or 1/(1-p) broadcast
  // over the image; the gradient takes the same constant mask.
  const uint64_t seed = (generator != nullptr ? *generator : default_generator()).next_u64();
  const Tensor mask = dropout(Tensor::ones({x.shape()[0], x.shape()[1], 1, 1}, x.dtype()), p, seed);
  return mul(x, Variable(mask));
}

}  // namespace minigrad

// Embedding lookup: out[n] = weight[ids[n]]. Row r of the weight receives the sum of the gradients of
// every output position that looked it up (a scatter-add); rows nobody looked up get zero.
#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx) {
  if (!weight.defined() || !ids.defined()) throw ValueError("embedding", "an operand is undefined");
  if (weight.rank() != 2)
    throw ShapeError("embedding", "the weight must be [V, D], got " + weight.shape().str());
  if (ids.dtype() != DType::Int64) {
    throw DTypeError("embedding", "token ids must be int64, got " + std::string(dtype_name(ids.dtype())));
  }
  const int64_t vocab = weight.shape()[0], dim = weight.shape()[1];
  const Tensor flat = ids.contiguous().reshape({-1});  // [N]
  const int64_t* p = flat.data_ptr<const int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    if (p[i] < 0 || p[i] >= vocab) {
      throw IndexError("embedding", "token id " + std::to_string(p[i]) + " is out of range for a table of " +
                                        std::to_string(vocab) + " rows");
    }
  }
  Shape out_shape = ids.shape();
  out_shape.push_back(dim);
  Tensor out = index_select(weight.data(), 0, flat).reshape(out_shape);  // ids.shape + [D]
  return record(
      "embedding", out, {weight}, [flat, vocab, dim, padding_idx](const Tensor& g, NeedsGrad) -> Grads {
        Tensor gw = index_add(Tensor::zeros({vocab, dim}, g.dtype()), 0, flat, g.reshape({-1, dim}));
        // The padding row stays a constant (zero) vector: it must not learn from the positions it pads.
        if (padding_idx >= 0 && padding_idx < vocab) gw.select(0, padding_idx).zero_();
        return {gw};
      });
}

}  // namespace minigrad

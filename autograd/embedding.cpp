// Embedding lookup: out[n] = weight[ids[n]]. Row r of the weight receives the sum of the gradients of
// every output position that looked it up (a scatter-add); rows nobody looked up get zero.
#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

namespace {

// The weight's gradient: row r is the sum of the gradients g (ids.shape + [D]) of the positions that
// looked row r up (a scatter-add). The padding row stays a constant (zero) vector: it must not learn
// from the positions it pads.
Tensor scatter_rows(const Tensor& g, const Tensor& ids, int64_t vocab, int64_t dim, int64_t padding_idx) {
  Tensor gw = Tensor::zeros({vocab, dim}, g.dtype());
  index_add_(gw, 0, ids, g.reshape({-1, dim}));
  if (padding_idx >= 0 && padding_idx < vocab) gw.select(0, padding_idx).zero_();
  return gw;
}

// Rows `ids` of `table`, on Tensors or recorded on Variables.
Tensor pick_rows(const Tensor& table, const Tensor& ids) {
  return index_select(table, 0, ids);
}
Variable pick_rows(const Variable& table, const Tensor& ids) {
  return embedding(table, ids);
}

// The same as an op of its own, for create_graph. It is linear in g, so its gradient picks rows again:
// an embedding lookup of the upstream gradient, with the padding row (a constant) zeroed — itself
// differentiable, so derivatives of any order exist.
Variable scatter_rows(const Variable& g, const SavedTensor& ids, int64_t vocab, int64_t dim,
                      int64_t padding_idx) {
  const Shape g_shape = g.shape();
  return record("embedding_backward", scatter_rows(g.data(), ids.get(), vocab, dim, padding_idx), {g},
                [ids, vocab, padding_idx, g_shape]<typename G>(const G& gg, NeedsGrad) {
                  G rows = gg;  // [V, D]
                  if (padding_idx >= 0 && padding_idx < vocab) {
                    Tensor keep = Tensor::ones({vocab, 1}, gg.dtype());
                    keep.select(0, padding_idx).zero_();
                    rows = mul(rows, G(keep));
                  }
                  return GradsOf<G>{reshape(pick_rows(rows, ids.get()), g_shape)};
                });
}

}  // namespace

Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx) {
  if (!weight.defined() || !ids.defined()) throw ValueError("embedding", "an operand is undefined");
  if (weight.rank() != 2)
    throw ShapeError("embedding", "the weight must be [V, D], got " + weight.shape().str());
  check_dtype("embedding", "the token ids", ids, DType::Int64);
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
  // The ids are saved (not the weight: the gradient does not depend on it).
  return record(
      "embedding", out, {weight},
      Backward{[ids = SavedTensor(flat), vocab, dim, padding_idx](const Tensor& g, NeedsGrad) -> Grads {
                 return {scatter_rows(g, ids.get(), vocab, dim, padding_idx)};
               },
               [ids = SavedTensor(flat), vocab, dim, padding_idx](const Variable& g, NeedsGrad)
                   -> VariableGrads { return {scatter_rows(g, ids, vocab, dim, padding_idx)}; }});
}

}  // namespace minigrad

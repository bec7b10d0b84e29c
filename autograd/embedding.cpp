// Embedding lookup: out[n] = weight[ids[n]]. Row r of the weight receives the sum of the gradients of
// every output position that looked it up (a scatter-add); rows nobody looked up get zero. With
// sparse = true the weight's gradient is those rows alone (tensor/row_sparse.h).
#include <vector>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad {

Variable embedding_backward(const Variable& g, const Tensor& ids, int64_t vocab, int64_t padding_idx) {
  // Linear in g, so its gradient picks rows again: an embedding lookup of the upstream gradient, with
  // the padding row (a constant) zeroed.
  return record(
      "embedding_backward", embedding_backward(g.data(), ids, vocab, padding_idx), {g},
      [sids = SavedTensor(ids), vocab, padding_idx, g_shape = g.shape()](const Variable& gg,
                                                                         NeedsGrad) -> VariableGrads {
        Variable rows = gg;  // [V, D]
        if (padding_idx >= 0 && padding_idx < vocab) {
          Tensor keep = Tensor::ones({vocab, 1}, gg.dtype());
          keep.select(0, padding_idx).zero_();
          rows = mul(rows, Variable(keep));
        }
        return {reshape(embedding(rows, sids.get()), g_shape)};
      },
      [&](const Tangents& t) { return embedding_backward(t[0], ids, vocab, padding_idx); });
}

Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx) {
  return embedding(weight, ids, EmbeddingFuncOptions{.padding_idx = padding_idx});
}

Variable embedding(const Variable& weight, const Tensor& ids, const EmbeddingFuncOptions& options) {
  if (!weight.defined() || !ids.defined()) throw ValueError("embedding", "an operand is undefined");
  if (weight.rank() != 2)
    throw ShapeError("embedding", "the weight must be [V, D], got " + weight.shape().str());
  check_dtype("embedding", "the token ids", ids, DType::Int64);
  const int64_t vocab = weight.shape()[0], dim = weight.shape()[1], padding_idx = options.padding_idx;
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
      [ids = SavedTensor(flat), vocab, padding_idx, sparse = options.sparse](
          const Variable& g, NeedsGrad needs) -> VariableGrads {
        // Row-sparse (tensor/row_sparse.h) where the gradient goes straight into a table that is a
        // leaf, in an ordinary backward. With create_graph (grad mode on) the gradient must carry a
        // graph, and a table computed by another op passes it to that op's backward: both take the
        // dense gradient.
        const bool into_a_leaf = needs.node().inputs[0].leaf != nullptr;
        if (sparse && into_a_leaf && !GradMode::is_enabled())
          return {Variable(embedding_backward_row_sparse(g.data(), ids.get(), vocab, padding_idx))};
        return {embedding_backward(g, ids.get(), vocab, padding_idx)};
      },
      // ẇ's rows, the padding row's too, as PyTorch's: the output there is that row, so J·v includes it,
      // though the backward gives the row no gradient (a training convention, not a derivative)
      [&](const Tangents& t) { return reshape(embedding(t[0], flat), out_shape); });
}

}  // namespace minigrad

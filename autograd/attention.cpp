// Attention's ops: the masked softmax, and scaled dot-product attention in two kernels that compute the
// same numbers — the composed one, four ops a reader can follow one by one, and the fused one, whose
// forward and backward are single kernels (tensor/attention.h) that never build a mask tensor, never keep
// the dropout mask, and keep one (…, n_q, n_k) tensor (the weights) where the composed ops keep three.
#include <cmath>
#include <limits>

#include "autograd/functions.h"
#include "tensor/ops.h"

namespace minigrad {

Variable masked_softmax(const Variable& scores, const AttentionMask& mask) {
  if (mask.empty()) return softmax(scores, -1);
  if (scores.rank() < 3)
    throw ShapeError("masked_softmax", "expects scores (B, …, n_q, n_k), got " + scores.shape().str());
  const int r = scores.rank();
  Tensor hidden = mask.to_tensor(scores.shape()[0], scores.shape()[r - 2], scores.shape()[r - 1]);
  // (B|1, n_q|1, n_k) -> (B|1, 1, …, n_q|1, n_k): the middle (head) dimensions broadcast.
  Shape shape = hidden.shape();
  for (int d = 3; d < r; ++d) shape.insert(1, 1);
  // -inf: a hidden key's weight is exactly 0, and a row of them is softmax's "fully masked" row.
  return softmax(masked_fill(scores, hidden.reshape(shape), -std::numeric_limits<double>::infinity()), -1);
}

namespace {

// The composed kernel, op by op. Scaling Q (n_q·d numbers) rather than the scores (n_q·n_k) gives the
// same result with one pass fewer over the largest tensor.
AttentionResult composed_attention(const Variable& q, const Variable& k, const Variable& v,
                                   const AttentionMask& mask, double scale, double p, uint64_t seed) {
  const Variable scores = matmul(q * scale, transpose(k, -1, -2));  // (B, …, n_q, n_k)
  const Variable weights = masked_softmax(scores, mask);
  const Variable dropped = p > 0 ? dropout_with_seed(weights, p, seed) : weights;
  return {matmul(dropped, v), weights.data()};  // (B, …, n_q, d_v)
}

// The fused kernel's backward formulas written with differentiable ops, for create_graph: the weights
// recomputed from Q and K, so that the gradients depend on them as they should.
VariableGrads attention_gradients(const Variable& g, const Variable& q, const Variable& k, const Variable& v,
                                  const AttentionMask& mask, double scale, double p, uint64_t seed) {
  const Variable P = masked_softmax(matmul(q * scale, transpose(k, -1, -2)), mask);
  auto drop = [&](const Variable& x) { return p > 0 ? dropout_with_seed(x, p, seed) : x; };
  const Variable dV = matmul(transpose(drop(P), -1, -2), g);  // Pdᵀ·dO
  const Variable dP = drop(matmul(g, transpose(v, -1, -2)));  // dropout(dO·Vᵀ)
  const Variable dS = P * (dP - sum(dP * P, {-1}, /*keepdim=*/true));
  const Variable dQ = matmul(dS, k) * scale;
  const Variable dK = matmul(transpose(dS, -1, -2), q) * scale;
  return {dQ, dK, dV};
}

}  // namespace

AttentionResult scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v,
                                             const AttentionOptions& options) {
  if (!q.defined() || !k.defined() || !v.defined())
    throw ValueError("scaled_dot_product_attention", "an operand is undefined");
  const double scale =
      options.scale != 0 ? options.scale : 1 / std::sqrt(static_cast<double>(q.shape().back()));
  const double p = options.dropout;
  const uint64_t seed = options.seed;
  if (options.kernel == AttentionKernel::Composed) {
    return composed_attention(q, k, v, options.mask, scale, p, seed);
  }
  AttentionForward forward = attention_forward(q.data(), k.data(), v.data(), options.mask, scale, p, seed);
  // Q and K are kept only if a score needs a gradient (dV needs the weights alone); the weights always.
  const bool scores_need_grad = q.requires_grad() || k.requires_grad();
  SavedTensor sq = save_if(q, scores_need_grad), sk = save_if(k, scores_need_grad),
              sv = save_if(v, scores_need_grad), sw(forward.weights);
  // For create_graph only: the mask's tensors, to recompute the weights with differentiable ops.
  SavedTensor valid(options.mask.valid_lens), padding(options.mask.key_padding_mask);
  const bool causal = options.mask.causal;
  Variable output =
      record("scaled_dot_product_attention", forward.output, {q, k, v},
             Backward{[sq, sk, sv, sw, scale, p, seed](const Tensor& g, NeedsGrad needs) -> Grads {
                        if (!sq.defined()) {  // only V needs a gradient: dV = Pdᵀ·dO
                          const Tensor Pd = p > 0 ? dropout(sw.get(), p, seed) : sw.get();
                          return {Tensor(), Tensor(), matmul(Pd.transpose(-1, -2), g)};
                        }
                        AttentionGradients grads =
                            attention_backward(g, sq.get(), sk.get(), sv.get(), sw.get(), scale, p, seed,
                                               {needs[0], needs[1], needs[2]});
                        return {grads.q, grads.k, grads.v};
                      },
                      [sq, sk, sv, sw, valid, padding, causal, scale, p, seed](const Variable& g,
                                                                               NeedsGrad) -> VariableGrads {
                        if (!sq.defined()) {  // only V needs a gradient, and the weights are a constant
                          const Variable P(sw.get());
                          return {Variable(), Variable(),
                                  matmul(transpose(p > 0 ? dropout_with_seed(P, p, seed) : P, -1, -2), g)};
                        }
                        const AttentionMask mask{valid.defined() ? valid.get() : Tensor(),
                                                 padding.defined() ? padding.get() : Tensor(), causal};
                        return attention_gradients(g, sq.variable(), sk.variable(), sv.variable(), mask,
                                                   scale, p, seed);
                      }});
  return {output, forward.weights};
}

}  // namespace minigrad

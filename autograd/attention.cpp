// Attention's ops: the masked softmax, and scaled dot-product attention in two kernels that compute the
// same numbers — the composed one, four ops a reader can follow one by one, and the fused one, whose
// forward and backward are single kernels (tensor/attention.h) that never build a mask tensor, never keep
// the dropout mask, and keep one (…, n_q, n_k) tensor (the weights) where the composed ops keep three.
#include <array>
#include <cmath>
#include <limits>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

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

}  // namespace

VariableGrads scaled_dot_product_attention_backward(const Variable& g, const Variable& q, const Variable& k,
                                                    const Variable& v, const Tensor& weights,
                                                    const AttentionMask& mask, double scale, double p,
                                                    uint64_t seed, std::array<bool, 3> needs) {
  auto drop = [&](const Variable& x) { return p > 0 ? dropout_with_seed(x, p, seed) : x; };
  if (!needs[0] && !needs[1]) {  // only V needs a gradient, and the weights are a constant: dV = Pdᵀ·dO
    return {Variable(), Variable(), matmul(transpose(drop(Variable(weights)), -1, -2), g)};
  }
  const bool records = GradMode::is_enabled() &&
                       (g.requires_grad() || q.requires_grad() || k.requires_grad() || v.requires_grad());
  if (!records) {  // the fused kernel
    AttentionGradients grads =
        attention_backward(g.data(), q.data(), k.data(), v.data(), weights, scale, p, seed, needs);
    auto wrap = [](Tensor& t) { return t.defined() ? Variable(std::move(t)) : Variable(); };
    return {wrap(grads.q), wrap(grads.k), wrap(grads.v)};
  }
  // Recorded (create_graph): the kernel's three outputs would need a node each, so the same formulas are
  // composed from differentiable ops instead, with the weights recomputed from Q and K so that the
  // gradients depend on them as they should. gradgradcheck holds the two against each other.
  const Variable P = masked_softmax(matmul(q * scale, transpose(k, -1, -2)), mask);
  const Variable dV = matmul(transpose(drop(P), -1, -2), g);  // Pdᵀ·dO
  const Variable dP = drop(matmul(g, transpose(v, -1, -2)));  // dropout(dO·Vᵀ)
  const Variable dS = P * (dP - sum(dP * P, {-1}, /*keepdim=*/true));
  return {matmul(dS, k) * scale, matmul(transpose(dS, -1, -2), q) * scale, dV};
}

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
  // Q, K and V are kept only if a score needs a gradient (dV needs the weights alone); the weights always,
  // and the mask's tensors to recompute the weights when the gradient is recorded.
  const bool scores_need_grad = q.requires_grad() || k.requires_grad();
  Variable output = record(
      "scaled_dot_product_attention", forward.output, {q, k, v},
      [sq = save_if(q, scores_need_grad), sk = save_if(k, scores_need_grad),
       sv = save_if(v, scores_need_grad), sw = SavedTensor(forward.weights),
       valid = SavedTensor(options.mask.valid_lens), padding = SavedTensor(options.mask.key_padding_mask),
       causal = options.mask.causal, scale, p, seed](const Variable& g, NeedsGrad needs) -> VariableGrads {
        const AttentionMask mask{valid.defined() ? valid.get() : Tensor(),
                                 padding.defined() ? padding.get() : Tensor(), causal};
        return scaled_dot_product_attention_backward(g, sq.defined() ? sq.variable() : Variable(),
                                                     sk.defined() ? sk.variable() : Variable(),
                                                     sv.defined() ? sv.variable() : Variable(), sw.get(),
                                                     mask, scale, p, seed, {needs[0], needs[1], needs[2]});
      },
      [&](const Tangents& t) {  // Ṡ = scale·(Q̇Kᵀ + QK̇ᵀ), Ṗ = P·(Ṡ - Σ Ṡ·P), Ȯ = drop(Ṗ)·V + drop(P)·V̇
        auto drop = [&](const Variable& x) { return p > 0 ? dropout_with_seed(x, p, seed) : x; };
        const Variable weights(forward.weights);  // 0 at hidden keys, so their scores' tangents drop out
        const Variable scores_dot =
            sum_of_terms({t.has(0) ? matmul(t[0], transpose(k, -1, -2)) * scale : Variable(),
                          t.has(1) ? matmul(q, transpose(t[1], -1, -2)) * scale : Variable()});
        return t.sum(
            {t.has(0) || t.has(1) ? matmul(drop(softmax_backward(scores_dot, weights, -1)), v) : Variable(),
             t.has(2) ? matmul(drop(weights), t[2]) : Variable()});
      });
  return {output, forward.weights};
}

}  // namespace minigrad

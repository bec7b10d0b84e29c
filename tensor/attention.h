// Scaled dot-product attention as one fused kernel, forward and backward, on plain tensors. The autograd
// op that records it is scaled_dot_product_attention (autograd/attention.cpp); the readable composed
// version (matmul, masked softmax, dropout, matmul) is there too.
//
// For each group g of the leading dimensions (batch × heads) and each block of query rows:
//
//   forward                                    backward (given dO, and the weights P kept by the forward)
//   S  = scale · Q·Kᵀ        (rows × n_k)      dV += Pdᵀ·dO
//   S  = -inf where masked                     dPd = dO·Vᵀ
//   P  = softmax(S) per row  (kept)            dP  = dropout(dPd)       (the same mask)
//   Pd = dropout(P)          (a scratch block) dS  = P ⊙ (dP - rowsum(dP ⊙ P))
//   O  = Pd·V                                  dQ  = scale · dS·K,  dK += scale · dSᵀ·Q
//
// The n_q × n_k scores are worked on one block of query rows at a time, sized to stay in the L2 cache
// (attention_rows_per_block); each block holds whole rows of keys, so the softmax needs no running (online)
// maximum. The masks are applied from their descriptions (lengths, a key padding row, causality), never built
// as a tensor, and the dropout mask is regenerated from its seed (DropoutMask), never stored: the backward
// makes a block's factors once and uses them twice, for Pd and dP (regenerating the mask had been the largest
// part of attention's own time). The weights themselves are kept for the backward: making them again there
// instead (the product Q·Kᵀ, the mask and the softmax run a second time), as FlashAttention does, costs
// more than reading them back when the heads are narrow (32 wide on bench/train-step.sh's S, 128 MB of
// weights a step): the product is shallow, and the exponentials are computed twice. On the main job's
// heads, 64 wide over up to 1,024 keys, it gained nothing with OpenBLAS's own kernels (1.11× with the
// pinned AVX2 ones): docs/history/performance.md, "Attention that makes its weights again" and "Timed
// again, with the scores in minigrad's kernel".
// Groups run in parallel, one thread each, with single-threaded products inside (gemm(), which gives
// most of these to minigrad's own kernel, tensor/thin_gemm.h, on a CPU with AVX-512).
#pragma once

#include "minigrad/tensor/tensor.h"

namespace minigrad {

// Which keys each query may attend to. Any combination may be given; a key is hidden if any part hides it.
struct AttentionMask {
  // int64, (B) or (B, n_q): keys at positions >= valid_lens are hidden (per sequence, or per query),
  // d2l's valid_lens.
  Tensor valid_lens{};
  // bool, (B, n_k): true marks a padding key to hide (PyTorch's key_padding_mask).
  Tensor key_padding_mask{};
  // Query i sees keys j <= i only.
  bool causal = false;

  bool empty() const { return !valid_lens.defined() && !key_padding_mask.defined() && !causal; }
  // Throws ShapeError or DTypeError from `op` unless the parts fit a batch of B sequences of n_q queries
  // and n_k keys.
  void check(std::string_view op, int64_t batch, int64_t n_q, int64_t n_k) const;
  // The mask as a bool tensor (B or 1, n_q or 1, n_k), true where a key is hidden; undefined if empty().
  Tensor to_tensor(int64_t batch, int64_t n_q, int64_t n_k) const;
};

struct AttentionForward {
  Tensor output;   // (…, n_q, d_v)
  Tensor weights;  // (…, n_q, n_k): softmax of the masked scores, before dropout
};

// q (…, n_q, d), k (…, n_k, d), v (…, n_k, d_v), the same leading dimensions (B first, for the mask).
// Dropout with probability `dropout` (0 for none) on the weights, its mask given by `seed`.
AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const AttentionMask& mask, double scale, double dropout, uint64_t seed);

// Query rows per block: a block of scores (rows × n_k) of at most half the L2 cache, so that it stays there
// beside the keys and values its products read. The larger the block, the fewer and larger its products:
// each copies the keys (or packs them, in BLAS) again (docs/performance.md, "Attention's blocks").
int64_t attention_rows_per_block(int64_t n_q, int64_t n_k, size_t element_size);

struct AttentionGradients {
  Tensor q, k, v;  // undefined where not asked for
};

// The gradients for the forward above, from dO (…, n_q, d_v) and the forward's weights; the mask needs no
// repeating (masked weights are 0, so are their gradients). `needs` says which of q, k, v to compute.
AttentionGradients attention_backward(const Tensor& grad_output, const Tensor& q, const Tensor& k,
                                      const Tensor& v, const Tensor& weights, double scale, double dropout,
                                      uint64_t seed, std::array<bool, 3> needs);

}  // namespace minigrad

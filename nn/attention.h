// Attention, as d2l's "Attention Mechanisms and Transformers" chapters and the NYU Deep Learning lecture
// on attention describe it.
//
// Scaled dot-product attention of queries Q (…, n_q, d), keys K (…, n_k, d), values V (…, n_k, d_v):
//
//   scores  = Q·Kᵀ / √d                       (…, n_q, n_k)
//   weights = masked softmax(scores) over the keys
//   output  = dropout(weights)·V              (…, n_q, d_v)
//
// Masking hides keys from queries: padding at the end of a shorter sequence, or the future in a causal
// model. Masked scores are set to -inf before the softmax, so their weights are exactly 0, and a query with
// every key masked gets weights of 0 (it attends to nothing), softmax's convention for a fully masked row
// (tensor/softmax.h). (d2l masks with -1e6 instead, which gives such a query uniform weights; PyTorch's
// attention gives it NaN.)
#pragma once

#include <functional>

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/dropout.h"
#include "minigrad/nn/linear.h"
#include "minigrad/nn/module.h"

namespace minigrad::nn {

// The mask (which keys each query may attend to) and the masked softmax are ops of the autograd layer
// (tensor/attention.h, autograd/attention.cpp); they are named here too, where attention is built.
using minigrad::AttentionKernel;
using minigrad::AttentionMask;
using minigrad::masked_softmax;

class DotProductAttention : public Layer<DotProductAttention> {
 public:
  explicit DotProductAttention(double dropout = 0, Generator* generator = nullptr);

  // Q (B, …, n_q, d), K (B, …, n_k, d), V (B, …, n_k, d_v) -> (B, …, n_q, d_v)
  Variable forward(const Variable& queries, const Variable& keys, const Variable& values,
                   const AttentionMask& mask = {}) const;

  // The weights of the last forward pass, (B, …, n_q, n_k), before dropout.
  const Tensor& attention_weights() const { return attention_weights_; }

  std::string name() const override { return "DotProductAttention"; }

  std::shared_ptr<Dropout> dropout;
  // Fused (the default) or Composed: the same numbers, see AttentionKernel.
  AttentionKernel kernel = AttentionKernel::Fused;

 private:
  // A record of the last call, kept for inspection, not part of the model: a const model records it too,
  // so one module must not run forward in two threads at once.
  mutable Tensor attention_weights_;
};

// One projection x·weightᵀ + bias inside multi-head attention: weight (out, in), bias (out) or undefined.
struct Projection {
  Variable weight;
  Variable bias;
};

// Multi-head attention's one computation. Both namings run it: MultiHeadAttention (below) with d2l's
// parameters W_q, W_k, W_v, W_o, and MultiheadAttention (transformer_encoder_layer.h) with PyTorch's
// in_proj_weight and out_proj.
//   heads_k = project_heads(keys, W_k), heads_v = project_heads(values, W_v)   (B, h, n_k, E/h)
//   heads_q = project_heads(queries, W_q)                                        (B, h, n_q, E/h)
//   output  = merge(attend(heads_q, heads_k, heads_v))·W_oᵀ + b_o                (B, n_q, E)
// with `attend` the per-head scaled dot-product attention (DotProductAttention, or the same op called
// directly).
//
// x (B, n, in) -> x·Wᵀ + b (B, n, E) -> (B, n, h, E/h) -> (B, h, n, E/h): a view of the projection.
Variable project_heads(const Variable& x, const Projection& projection, int64_t num_heads);
// queries (B, n_q, in), heads_k and heads_v (B, h, n_k, E/h) -> (B, n_q, E), as above.
using HeadAttention =
    std::function<Variable(const Variable& heads_q, const Variable& heads_k, const Variable& heads_v)>;
Variable attend_heads(const Variable& queries, const Projection& query, const Variable& heads_k,
                      const Variable& heads_v, const Projection& output, const HeadAttention& attend);

struct MultiHeadAttentionOptions {
  int64_t num_hiddens = 0;
  int64_t num_heads = 1;
  double dropout = 0;
  bool bias = false;
  // The widths of the incoming queries, keys and values; 0 means num_hiddens. Different sizes make the
  // same module do cross-attention (queries from one sequence, keys and values from another).
  int64_t query_size = 0;
  int64_t key_size = 0;
  int64_t value_size = 0;
  // Draws the initial weights and the dropout masks; nullptr: this thread's default. Not owned.
  Generator* generator = nullptr;
};

// h heads, each attending in its own num_hiddens/h-wide subspace:
//   head_i = attention(Q·W_q,i, K·W_k,i, V·W_v,i),   output = concat(head_1 … head_h)·W_o
// The heads are split by a reshape to (B, n, h, num_hiddens/h) and a transpose to (B, h, n, …), so that
// one batched matmul serves every head, and merged back the same way.
class MultiHeadAttention : public Layer<MultiHeadAttention> {
 public:
  explicit MultiHeadAttention(const MultiHeadAttentionOptions& options);
  MultiHeadAttention(int64_t num_hiddens, int64_t num_heads, double dropout, bool bias = false)
      : MultiHeadAttention(MultiHeadAttentionOptions{num_hiddens, num_heads, dropout, bias}) {}

  // queries (B, n_q, query_size), keys (B, n_k, key_size), values (B, n_k, value_size)
  //   -> (B, n_q, num_hiddens)
  Variable forward(const Variable& queries, const Variable& keys, const Variable& values,
                   const AttentionMask& mask = {}) const;

  // The two halves of forward(), for incremental decoding, which projects each key and value once and
  // keeps them (a key/value cache) instead of re-projecting the whole prefix at every step:
  //   forward(q, k, v, mask) == attend(q, project_keys(k), project_values(v), mask)
  // keys (B, n_k, key_size) -> (B, num_heads, n_k, num_hiddens/num_heads), split into heads
  Variable project_keys(const Variable& keys) const;
  Variable project_values(const Variable& values) const;
  // queries (B, n_q, query_size), heads_k and heads_v (B, num_heads, n_k, num_hiddens/num_heads)
  //   -> (B, n_q, num_hiddens)
  Variable attend(const Variable& queries, const Variable& heads_k, const Variable& heads_v,
                  const AttentionMask& mask = {}) const;

  // Per-head weights of the last forward pass: (B, num_heads, n_q, n_k).
  const Tensor& attention_weights() const { return attention->attention_weights(); }

  std::string name() const override { return "MultiHeadAttention"; }

  std::shared_ptr<DotProductAttention> attention;
  std::shared_ptr<Linear> W_q, W_k, W_v, W_o;
  MultiHeadAttentionOptions options;
};

// Sets the kernel of every DotProductAttention in `module` and its descendants (to compare the fused
// kernel with the composed reference on a whole model).
void set_attention_kernel(Module& module, AttentionKernel kernel);

}  // namespace minigrad::nn

// PyTorch's nn.MultiheadAttention and nn.TransformerEncoderLayer: the same options, defaults and parameter
// names, so that a PyTorch layer's state dict loads (optim::load_weights) and gives the same output.
// Pick these to port a PyTorch model or to follow PyTorch's docs; the d2l-style MultiHeadAttention and
// EncoderLayer (attention.h, transformer.h) follow the textbook's names and defaults instead.
//
//   PyTorch                                               minigrad
//   layer = nn.TransformerEncoderLayer(                   nn::TransformerEncoderLayer layer(
//       d_model=64, nhead=4, dim_feedforward=128,             {.d_model = 64, .nhead = 4, .dim_feedforward =
//       128, batch_first=True)                                      .batch_first = true});
//   y = layer(x, src_key_padding_mask=pad)                y = layer(x, {.key_padding_mask = pad});
//
// As in PyTorch, batch_first is false by default: x is (T, B, d_model). Masks are an AttentionMask:
// key_padding_mask is PyTorch's src_key_padding_mask (true hides a key), causal is its square subsequent
// mask, and valid_lens the d2l form. One difference: a query whose keys are all hidden gets zeros where
// PyTorch gives NaN (docs/conventions.md).
#pragma once

#include "minigrad/nn/attention.h"
#include "minigrad/nn/layer_norm.h"
#include "minigrad/nn/transformer.h"

namespace minigrad::nn {

struct MultiheadAttentionOptions {
  int64_t embed_dim = 0;
  int64_t num_heads = 1;
  double dropout = 0;  // on the attention weights, in training
  bool bias = true;    // in_proj_bias and out_proj.bias
  bool batch_first = false;
  // Draws the initial weights and the dropout masks; nullptr: this thread's default. Not owned.
  Generator* generator = nullptr;
};

// num_heads heads attend, each in its own embed_dim/num_heads-wide subspace:
//   q, k, v = query·W_qᵀ + b_q, key·W_kᵀ + b_k, value·W_vᵀ + b_v   (W_q, W_k, W_v: in_proj_weight's thirds)
//   output  = out_proj(concat over heads of attention(q_i, k_i, v_i))
class MultiheadAttention : public Layer<MultiheadAttention> {
 public:
  explicit MultiheadAttention(const MultiheadAttentionOptions& options);

  // batch_first: query (B, n_q, E), key and value (B, n_k, E) -> (B, n_q, E);
  // otherwise (n_q, B, E), (n_k, B, E) -> (n_q, B, E).
  // PyTorch also returns the weights averaged over heads; here attention_weights() has them per head.
  Variable forward(const Variable& query, const Variable& key, const Variable& value,
                   const AttentionMask& mask = {}) const;

  // Per-head weights of the last forward pass, (B, num_heads, n_q, n_k), before dropout.
  const Tensor& attention_weights() const { return attention_weights_; }

  std::string name() const override { return "MultiheadAttention"; }
  std::string extra_repr() const override;

  Variable in_proj_weight;  // (3·embed_dim, embed_dim): W_q, W_k and W_v stacked
  Variable in_proj_bias;    // (3·embed_dim), or undefined without bias
  std::shared_ptr<Linear> out_proj;
  MultiheadAttentionOptions options;

 private:
  // A record of the last call, kept for inspection, not part of the model: a const model records it too,
  // so one module must not run forward in two threads at once.
  mutable Tensor attention_weights_;
};

struct TransformerEncoderLayerOptions {
  int64_t d_model = 0;
  int64_t nhead = 1;
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  Activation activation = Activation::ReLU;
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;
  // Draws the initial weights and the dropout masks; nullptr: this thread's default. Not owned.
  Generator* generator = nullptr;
};

// Self-attention and a feed-forward block, each with a residual connection and a LayerNorm:
//   post-norm (default):  x = norm1(x + sa(x));        x = norm2(x + ff(x))
//   pre-norm (norm_first): x = x + sa(norm1(x));        x = x + ff(norm2(x))
// with sa(x) = dropout1(self_attn(x, x, x)) and ff(x) = dropout2(linear2(dropout(activation(linear1(x))))).
class TransformerEncoderLayer : public Layer<TransformerEncoderLayer> {
 public:
  explicit TransformerEncoderLayer(const TransformerEncoderLayerOptions& options);

  // src (T, B, d_model), or (B, T, d_model) with batch_first -> the same shape
  Variable forward(const Variable& src, const AttentionMask& mask = {}) const;

  std::string name() const override { return "TransformerEncoderLayer"; }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;
  TransformerEncoderLayerOptions options;
};

}  // namespace minigrad::nn

// PyTorch's nn.TransformerEncoderLayer: the same options, defaults and parameter names, so that a PyTorch
// layer's state dict loads (optim::load_weights) and gives the same output. Its self_attn is the one
// MultiHeadAttention (attention.h) with PyTorch's names. Pick it to port a PyTorch model or to follow
// PyTorch's docs; the d2l-style EncoderLayer (transformer.h) follows the textbook's names and defaults.
//
//   PyTorch                                               minigrad
//   layer = nn.TransformerEncoderLayer(                   nn::TransformerEncoderLayer layer(
//       64, 4, dim_feedforward=128, batch_first=True)         64, 4, {.dim_feedforward = 128, .batch_first =
//       true});
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
  // PyTorch's TransformerEncoderLayer(d_model, nhead, ...): nn::TransformerEncoderLayer(64, 4, {.batch_first
  // = true}).
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerEncoderLayerOptions options = {});
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      TransformerEncoderLayer,
      ConstructorLines<void(const TransformerEncoderLayerOptions&), void(int64_t, int64_t),
                       void(int64_t, int64_t, TransformerEncoderLayerOptions)>,
      A...>
  explicit TransformerEncoderLayer(A&&...) : TransformerEncoderLayer(TransformerEncoderLayerOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::TransformerEncoderLayer takes (d_model, nhead), then {options}; or "
                  "(TransformerEncoderLayerOptions)");
  }

  // src (T, B, d_model), or (B, T, d_model) with batch_first -> the same shape
  Variable forward(const Variable& src, const AttentionMask& mask = {}) const;

  std::string name() const override { return "TransformerEncoderLayer"; }

  std::shared_ptr<MultiHeadAttention> self_attn;  // with PyTorch's names (in_proj_weight, out_proj)
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;
  TransformerEncoderLayerOptions options;
};

}  // namespace minigrad::nn

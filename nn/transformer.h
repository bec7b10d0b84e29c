// The Transformer encoder, as in Vaswani et al. (2017) and d2l's "The Transformer Architecture":
//
//   X = PositionalEncoding(Embedding(tokens)·√d)
//   for each layer:                       post-norm (default)            pre-norm (norm_first)
//     Y = ...                             LN(X + drop(attention(X)))     X + drop(attention(LN(X)))
//     X = ...                             LN(Y + drop(FFN(Y)))           Y + drop(FFN(LN(Y)))
//   (pre-norm ends with a final LayerNorm)
//
// Self-attention lets every position look at every other (valid) position; the position-wise FFN then
// transforms each position on its own.
#pragma once

#include <functional>
#include <optional>
#include <tuple>
#include <utility>

#include "minigrad/nn/attention.h"
#include "minigrad/nn/embedding.h"
#include "minigrad/nn/layer_norm.h"
#include "minigrad/nn/module_list.h"
#include "minigrad/nn/positional_encoding.h"

namespace minigrad::nn {

enum class Activation { ReLU, GELU };

// The position-wise feed-forward block of both encoder layers (and the decoder's):
//   x (B, T, d) -> linear2(dropout(activation(linear1(x)))) (B, T, d), through (B, T, d_ff)
// d2l's PositionWiseFFN has no dropout inside (null); PyTorch's TransformerEncoderLayer has one.
Variable feed_forward(const Variable& x, const Linear& linear1, const Linear& linear2, Activation activation,
                      const Dropout* dropout = nullptr);

// Two Linear layers with an activation between, applied to each position alone:
//   (B, T, num_hiddens) -> (B, T, ffn_num_hiddens) -> (B, T, num_hiddens)
class PositionWiseFFN : public Layer<PositionWiseFFN> {
 public:
  PositionWiseFFN(int64_t num_hiddens, int64_t ffn_num_hiddens, Activation activation = Activation::ReLU,
                  Generator* generator = nullptr);

  Variable forward(const Variable& x) const;

  std::string name() const override { return "PositionWiseFFN"; }
  std::string extra_repr() const override {
    return activation == Activation::ReLU ? "activation=ReLU" : "activation=GELU";
  }

  std::shared_ptr<Linear> dense1, dense2;
  Activation activation;
};

// A sublayer's residual connection and its layer norm (d2l's AddNorm), in either order:
//   post-norm (Vaswani's):  LN(x + dropout(sublayer(x)))
//   pre-norm (norm_first):  x + dropout(sublayer(LN(x)))
// Pre-norm leaves the residual stream itself un-normalised, so a stack of pre-norm layers ends with a
// LayerNorm of its own. Every layer here wraps each of its sublayers in one:
//
//   AddNorm addnorm(64, 0.1);  // post-norm; AddNorm(64, 0.1, &generator, /*norm_first=*/true) is pre-norm
//   Variable y = addnorm(x, [&](const Variable& v) { return (*ffn)(v); });
class AddNorm : public Layer<AddNorm> {
 public:
  // (..., normalized_size) -> the same shape
  using Sublayer = std::function<Variable(const Variable&)>;

  AddNorm(int64_t normalized_size, double dropout, Generator* generator = nullptr, bool norm_first = false);

  // x (..., normalized_size) -> the same shape
  Variable forward(const Variable& x, const Sublayer& sublayer) const;

  std::string name() const override { return "AddNorm"; }

  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<LayerNorm> ln;
  bool norm_first;
};

// AddNorm's computation with a norm and a dropout the caller holds, for a layer whose state dict names
// them on its own (PyTorch's TransformerEncoderLayer: norm1 and dropout1).
Variable add_norm(const Variable& x, const AddNorm::Sublayer& sublayer, const LayerNorm& norm,
                  const Dropout& dropout, bool norm_first);

// The options of one Transformer layer, an EncoderLayer's or a DecoderLayer's (as PyTorch's
// TransformerEncoderLayer and TransformerDecoderLayer take the same ones). The encoder's and the decoder's
// options hold them as `layer`, and the encoder-decoder's hold those two: each option is declared once,
// here (tests/layers/check_options_declared_once.py).
struct TransformerLayerOptions {
  int64_t num_hiddens = 0;
  int64_t ffn_num_hiddens = 0;
  int64_t num_heads = 1;
  double dropout = 0;
  // Dropout on the attention weights; unset means `dropout` (as d2l and PyTorch). It is the costliest
  // dropout of the layer: its masks are (batch, heads, length, length).
  std::optional<double> attention_dropout{};
  bool bias = false;        // in the attention projections, as d2l's use_bias
  bool norm_first = false;  // pre-norm instead of Vaswani's post-norm
  Activation activation = Activation::ReLU;
  // Draws the initial weights and the dropout masks; nullptr: this thread's default. Not owned.
  Generator* generator = nullptr;
};

// The token front-end the encoder and the decoder share: Embedding(tokens)·√d (scaled_embedding, below)
// plus the positional encoding. d2l and Vaswani et al. scale the embedding by √d because the positional
// encoding's entries lie in [-1, 1]: the two are then of comparable size when summed. Its width, dropout
// (on the sum) and generator are the layers' (TransformerLayerOptions).
struct TokenEmbeddingOptions {
  int64_t vocab_size = 0;
  int64_t max_len = 1000;  // longest sequence (positions of the positional encoding)
  bool learnable_positions = false;
  int64_t padding_idx = -1;
};

using TokenEmbedding = std::pair<std::shared_ptr<Embedding>, std::shared_ptr<PositionalEncoding>>;

// Registers both on `owner` as "embedding" and "pos_encoding" (the names in both state dicts):
//   std::tie(embedding, pos_encoding) = register_token_embedding(*this, options.layer, options.tokens);
TokenEmbedding register_token_embedding(Module& owner, const TransformerLayerOptions& layer,
                                        const TokenEmbeddingOptions& tokens);

// tokens (B, T) int64 -> Embedding(tokens)·√d, (B, T, embedding_dim): the token front-end before the
// positions; `who` names the model in an error.
Variable scaled_embedding(const Embedding& embedding, const Tensor& tokens, const char* who);

// One encoder layer (d2l's TransformerEncoderBlock): multi-head self-attention and a position-wise FFN,
// each with a residual connection and a layer norm.
class EncoderLayer : public Layer<EncoderLayer> {
 public:
  explicit EncoderLayer(const TransformerLayerOptions& options);

  // x (B, T, num_hiddens) -> same shape
  Variable forward(const Variable& x, const AttentionMask& mask = {}) const;

  std::string name() const override { return "EncoderLayer"; }
  std::string extra_repr() const override { return options.norm_first ? "norm_first=True" : ""; }

  std::shared_ptr<MultiHeadAttention> attention;
  std::shared_ptr<AddNorm> addnorm1;
  std::shared_ptr<PositionWiseFFN> ffn;
  std::shared_ptr<AddNorm> addnorm2;
  TransformerLayerOptions options;
};

// num_layers encoder layers over token embeddings and positions, as PyTorch's
// nn.TransformerEncoder(encoder_layer, num_layers) with the embedding in front:
//
//   nn::TransformerEncoder encoder({.layer = {.num_hiddens = 64, .ffn_num_hiddens = 128, .num_heads = 4},
//                                   .num_layers = 2,
//                                   .tokens = {.vocab_size = 10000}});
struct TransformerEncoderOptions {
  // Every layer's. Its dropout also applies to the embeddings plus positions, and its generator draws the
  // embedding too.
  TransformerLayerOptions layer{};
  int64_t num_layers = 1;
  TokenEmbeddingOptions tokens{};
};

class TransformerEncoder : public Layer<TransformerEncoder> {
 public:
  explicit TransformerEncoder(const TransformerEncoderOptions& options);

  // tokens (B, T) int64 -> (B, T, num_hiddens); the mask (typically valid_lens) is passed to every layer.
  // The same as encode(embed(tokens), mask).
  Variable forward(const Tensor& tokens, const AttentionMask& mask = {}) const;

  // The two halves of forward, for a model that adds something of its own to the token embeddings
  // before the layers see them (as PyTorch's nn.TransformerEncoder, which takes embeddings):
  //   embed:  tokens (B, T) int64 -> Embedding(tokens)·√d, (B, T, num_hiddens), before the positions
  //   encode: x (B, T, num_hiddens) -> + PositionalEncoding -> the layers -> (B, T, num_hiddens)
  Variable embed(const Tensor& tokens) const;
  Variable encode(const Variable& x, const AttentionMask& mask = {}) const;

  // Each layer's per-head attention weights from the last forward pass: (B, num_heads, T, T).
  std::vector<Tensor> attention_weights() const;

  // Layer i (of options.num_layers).
  EncoderLayer& layer(size_t i) const { return layers->at<EncoderLayer>(i); }

  std::string name() const override { return "TransformerEncoder"; }

  std::shared_ptr<Embedding> embedding;
  std::shared_ptr<PositionalEncoding> pos_encoding;
  std::shared_ptr<ModuleList> layers;     // EncoderLayers
  std::shared_ptr<LayerNorm> final_norm;  // pre-norm only
  TransformerEncoderOptions options;
};

// ---- names of the last release, kept for this one: each names its successor when used ----
using EncoderLayerOptions
    [[deprecated("use nn::TransformerLayerOptions (the layer's options; the "
                 "vocabulary and max_len are TransformerEncoderOptions')")]] = TransformerLayerOptions;
// x (B, T, d), valid_lens (B) -> (B, d)
[[deprecated("use mean_over_time(x, valid_lens, /*dim=*/1)")]] inline Variable masked_mean(
    const Variable& x, const Tensor& valid_lens) {
  return mean_over_time(x, valid_lens, 1);
}
[[deprecated("use max_over_time(x, valid_lens, /*dim=*/1)")]] inline Variable masked_max(
    const Variable& x, const Tensor& valid_lens) {
  return max_over_time(x, valid_lens, 1);
}

}  // namespace minigrad::nn

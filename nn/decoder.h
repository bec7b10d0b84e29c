// The Transformer decoder, as in Vaswani et al. (2017), d2l's "The Transformer Architecture" and
// PyTorch's nn.TransformerDecoderLayer:
//
//   for each layer:                post-norm (default)               pre-norm (norm_first)
//     X = ...                      LN(X + drop(selfattn(X)))         X + drop(selfattn(LN(X)))
//     X = ...                      LN(X + drop(crossattn(X, M)))     X + drop(crossattn(LN(X), M))
//     X = ...                      LN(X + drop(FFN(X)))              X + drop(FFN(LN(X)))
//
// Self-attention is causal (position i sees target positions <= i only), so that training on a whole
// target at once (teacher forcing) computes at every position what generation will compute when it gets
// there. Cross-attention's queries come from the decoder, its keys and values from the encoder's output M
// (the "memory"): it is where each output position looks up the part of the input it needs.
//
// Generation feeds the decoder one token at a time. Without a cache, step t recomputes all t positions of
// every layer; with a key/value cache (DecoderCache) it computes the new position only, attending to the
// keys and values the earlier steps kept: O(t) work instead of O(t²) for step t.
#pragma once

#include "minigrad/nn/transformer.h"

namespace minigrad::nn {

// Which positions are padding. Each tensor is int64 (B) or undefined (no padding).
struct DecoderMasks {
  Tensor target_valid_lens{};  // target positions >= this are padding: hidden as keys in self-attention
  Tensor source_valid_lens{};  // memory positions >= this are padding: hidden in cross-attention
};

// What one layer keeps between generation steps: its self-attention's keys and values for every position
// so far, and its cross-attention's keys and values of the memory (computed once).
struct LayerCache {
  Variable self_keys, self_values;    // (B, heads, t, head_size)
  Variable cross_keys, cross_values;  // (B, heads, S, head_size); undefined for decoder-only layers
};

class DecoderLayer : public Layer<DecoderLayer> {
 public:
  // cross_attention false: a decoder-only layer (a causal language model's), self-attention and FFN, no
  // memory.
  explicit DecoderLayer(const TransformerLayerOptions& options, bool cross_attention = true);

  // x (B, T, num_hiddens), memory (B, S, num_hiddens) -> (B, T, num_hiddens). memory is ignored (may be
  // undefined) without cross-attention.
  Variable forward(const Variable& x, const Variable& memory, const DecoderMasks& masks = {}) const;

  // Incremental form: x (B, n, num_hiddens) holds the next n positions, after the cache's t. Their keys
  // and values are appended to the cache; position t + i attends to positions <= t + i. The cross-attention
  // keys and values must already be in the cache (TransformerDecoder::start_cache puts them there).
  Variable forward_step(const Variable& x, LayerCache& cache, const Tensor& source_valid_lens = {}) const;

  std::string name() const override { return "DecoderLayer"; }
  std::string extra_repr() const override { return options.norm_first ? "norm_first=True" : ""; }

  std::shared_ptr<MultiHeadAttention> self_attention;
  std::shared_ptr<AddNorm> addnorm1;
  std::shared_ptr<MultiHeadAttention> cross_attention;  // null in a decoder-only layer
  std::shared_ptr<AddNorm> addnorm2;                    // null in a decoder-only layer
  std::shared_ptr<PositionWiseFFN> ffn;
  std::shared_ptr<AddNorm> addnorm3;
  TransformerLayerOptions options;

 private:
  // The three sub-layers around the two ways of attending (whole sequence, or cached steps).
  Variable sublayers(const Variable& x, const AddNorm::Sublayer& self_attend,
                     const AddNorm::Sublayer& cross_attend) const;
};

// num_layers decoder layers over token embeddings and positions, and the projection to the vocabulary, as
// PyTorch's nn.TransformerDecoder(decoder_layer, num_layers) with the embedding and the output layer:
//
//   nn::TransformerDecoder lm({.layer = {.num_hiddens = 64, .ffn_num_hiddens = 256, .num_heads = 4},
//                              .num_layers = 2,
//                              .tokens = {.vocab_size = 5000},
//                              .cross_attention = false});  // a decoder-only language model
struct TransformerDecoderOptions {
  // Every layer's. Its dropout also applies to the embeddings plus positions, and its generator draws the
  // embedding and the output layer too.
  TransformerLayerOptions layer{};
  int64_t num_layers = 1;
  TokenEmbeddingOptions tokens{};  // the target's vocabulary and longest target
  // A LayerNorm after the last layer; unset means "when pre-norm" (whose layers leave the residual
  // stream un-normalised), as the encoder does.
  std::optional<bool> final_norm{};
  bool cross_attention = true;  // false: a decoder-only (GPT-style) causal language model
  // Use the embedding table as the output projection too (Press and Wolf, 2017; Vaswani et al. do): the
  // logits are x·Eᵀ + b. Saves vocab_size·num_hiddens parameters.
  bool tie_weights = false;
};

// Everything TransformerDecoder::forward_step keeps between steps.
struct DecoderCache {
  std::vector<LayerCache> layers;
  Tensor source_valid_lens{};  // int64 (B), or undefined
  int64_t length = 0;          // positions fed so far

  // Keeps the rows `rows` (int64 (B')), in that order, of every cached tensor: beam search's reordering of
  // its hypotheses, or copying one source into several beams.
  void select_rows(const Tensor& rows);
};

class TransformerDecoder : public Layer<TransformerDecoder> {
 public:
  explicit TransformerDecoder(const TransformerDecoderOptions& options);

  // tokens (B, T) int64, memory (B, S, num_hiddens) (undefined without cross-attention)
  //   -> logits (B, T, vocab_size): at position i, the scores of the token after tokens[:, :i+1].
  Variable forward(const Tensor& tokens, const Variable& memory, const DecoderMasks& masks = {}) const;

  // A cache for generating from `memory` (undefined without cross-attention): each layer's cross-attention
  // keys and values, computed once here.
  DecoderCache start_cache(const Variable& memory, const Tensor& source_valid_lens = {});
  // tokens (B, n) int64: the next n tokens -> logits (B, n, vocab_size), as forward() would give for those
  // positions of the whole sequence.
  Variable forward_step(const Tensor& tokens, DecoderCache& cache) const;

  // Each layer's cross-attention weights from the last forward pass: (B, heads, T, S).
  std::vector<Tensor> cross_attention_weights() const;

  // Layer i (of options.num_layers).
  DecoderLayer& layer(size_t i) const { return layers->at<DecoderLayer>(i); }

  std::string name() const override { return "TransformerDecoder"; }
  std::string extra_repr() const override { return options.tie_weights ? "tie_weights=True" : ""; }

  std::shared_ptr<Embedding> embedding;
  std::shared_ptr<PositionalEncoding> pos_encoding;
  std::shared_ptr<ModuleList> layers;     // DecoderLayers
  std::shared_ptr<LayerNorm> final_norm;  // or null
  std::shared_ptr<Linear> output;         // (vocab_size, num_hiddens); null when tied
  Variable output_bias;                   // (vocab_size), when tied
  TransformerDecoderOptions options;

 private:
  // Embedding·√d plus the positions from `start`: tokens (B, T) -> (B, T, num_hiddens).
  Variable embed(const Tensor& tokens, int64_t start) const;
  // The final norm and the projection to the vocabulary: (B, T, num_hiddens) -> (B, T, vocab_size).
  Variable logits(const Variable& x) const;
};

// The encoder's options and the decoder's, as PyTorch's nn.Transformer takes a custom encoder and decoder.
// The decoder attends to the encoder's output, so it has cross-attention and the encoder's num_hiddens;
// the two usually share their layer options:
//
//   const nn::TransformerLayerOptions layer{.num_hiddens = 64, .ffn_num_hiddens = 128, .num_heads = 4};
//   nn::Transformer model({.encoder = {.layer = layer, .num_layers = 2, .tokens = {.vocab_size = 98}},
//                          .decoder = {.layer = layer, .num_layers = 2, .tokens = {.vocab_size = 98}}});
struct TransformerOptions {
  TransformerEncoderOptions encoder{};  // its tokens are the source's
  TransformerDecoderOptions decoder{};  // the target's
};

// The encoder-decoder Transformer for sequence-to-sequence tasks (translation, ...): the encoder reads the
// source, the decoder writes the target one token at a time while attending to the encoder's output.
class Transformer : public Layer<Transformer> {
 public:
  explicit Transformer(const TransformerOptions& options);

  // source (B, S) int64 -> memory (B, S, num_hiddens); source_valid_lens int64 (B) or undefined.
  Variable encode(const Tensor& source, const Tensor& source_valid_lens = {}) const;
  // source (B, S), target (B, T) (the decoder's input: the target shifted right behind a start token)
  //   -> logits (B, T, options.decoder.tokens.vocab_size)
  Variable forward(const Tensor& source, const Tensor& target, const DecoderMasks& masks = {}) const;

  std::string name() const override { return "Transformer"; }

  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;
  TransformerOptions options;
};

}  // namespace minigrad::nn

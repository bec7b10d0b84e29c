#include "minigrad/nn/transformer.h"

#include <cmath>

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

PositionWiseFFN::PositionWiseFFN(int64_t num_hiddens, int64_t ffn_num_hiddens, Activation act,
                                 Generator* generator)
    : activation(act) {
  dense1 = register_module("dense1", std::make_shared<Linear>(num_hiddens, ffn_num_hiddens, true, generator));
  dense2 = register_module("dense2", std::make_shared<Linear>(ffn_num_hiddens, num_hiddens, true, generator));
}

Variable feed_forward(const Variable& x, const Linear& linear1, const Linear& linear2, Activation activation,
                      const Dropout* dropout) {
  const Variable hidden = linear1(x);
  const Variable activated = activation == Activation::ReLU ? relu(hidden) : gelu(hidden);
  return linear2(dropout != nullptr ? (*dropout)(activated) : activated);
}

Variable PositionWiseFFN::forward(const Variable& x) const {
  return feed_forward(x, *dense1, *dense2, activation);
}

AddNorm::AddNorm(int64_t normalized_size, double p, Generator* generator, bool first) : norm_first(first) {
  dropout = register_module("dropout", std::make_shared<Dropout>(p, generator));
  ln = register_module("ln", std::make_shared<LayerNorm>(normalized_size));
}

Variable AddNorm::forward(const Variable& x, const Sublayer& sublayer) const {
  return add_norm(x, sublayer, *ln, *dropout, norm_first);
}

Variable add_norm(const Variable& x, const AddNorm::Sublayer& sublayer, const LayerNorm& norm,
                  const Dropout& dropout, bool norm_first) {
  if (norm_first) return x + dropout(sublayer(norm(x)));
  return norm(x + dropout(sublayer(x)));
}

EncoderLayer::EncoderLayer(const TransformerLayerOptions& opts) : options(opts) {
  attention = register_module("attention", std::make_shared<MultiHeadAttention>(MultiHeadAttentionOptions{
                                               .num_hiddens = opts.num_hiddens,
                                               .num_heads = opts.num_heads,
                                               .dropout = opts.attention_dropout.value_or(opts.dropout),
                                               .bias = opts.bias,
                                               .generator = opts.generator}));
  auto addnorm = [&] {
    return std::make_shared<AddNorm>(opts.num_hiddens, opts.dropout, opts.generator, opts.norm_first);
  };
  addnorm1 = register_module("addnorm1", addnorm());
  ffn = register_module("ffn", std::make_shared<PositionWiseFFN>(opts.num_hiddens, opts.ffn_num_hiddens,
                                                                 opts.activation, opts.generator));
  addnorm2 = register_module("addnorm2", addnorm());
}

Variable EncoderLayer::forward(const Variable& x, const AttentionMask& mask) const {
  const Variable y = (*addnorm1)(x, [&](const Variable& v) { return (*attention)(v, v, v, mask); });
  return (*addnorm2)(y, [&](const Variable& v) { return (*ffn)(v); });
}

TokenEmbedding register_token_embedding(Module& owner, const TransformerLayerOptions& layer,
                                        const TokenEmbeddingOptions& tokens) {
  TokenEmbedding front;
  front.first = owner.register_module(
      "embedding",
      std::make_shared<Embedding>(tokens.vocab_size, layer.num_hiddens, tokens.padding_idx, layer.generator));
  front.second = owner.register_module(
      "pos_encoding",
      std::make_shared<PositionalEncoding>(PositionalEncodingOptions{.num_hiddens = layer.num_hiddens,
                                                                     .dropout = layer.dropout,
                                                                     .max_len = tokens.max_len,
                                                                     .learnable = tokens.learnable_positions,
                                                                     .generator = layer.generator}));
  return front;
}

Variable scaled_embedding(const Embedding& embedding, const Tensor& tokens, const char* who) {
  if (tokens.rank() != 2) throw ShapeError(who, "expects tokens (B, T), got " + tokens.shape().str());
  const Variable embedded = embedding(tokens);  // (B, T, d)
  return embedded * std::sqrt(static_cast<double>(embedding.options.embedding_dim));
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderOptions& opts) : options(opts) {
  std::tie(embedding, pos_encoding) = register_token_embedding(*this, opts.layer, opts.tokens);
  const TransformerLayerOptions& layer = opts.layer;
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < opts.num_layers; ++i) layers->push_back(std::make_shared<EncoderLayer>(layer));
  if (layer.norm_first)
    final_norm = register_module("final_norm", std::make_shared<LayerNorm>(layer.num_hiddens));
}

Variable TransformerEncoder::forward(const Tensor& tokens, const AttentionMask& mask) const {
  return encode(embed(tokens), mask);
}

Variable TransformerEncoder::embed(const Tensor& tokens) const {
  return scaled_embedding(*embedding, tokens, "TransformerEncoder");
}

Variable TransformerEncoder::encode(const Variable& x, const AttentionMask& mask) const {
  const int64_t d = options.layer.num_hiddens;
  if (x.rank() != 3 || x.shape()[2] != d) {
    throw ShapeError("TransformerEncoder",
                     "expects x (B, T, " + std::to_string(d) + "), got " + x.shape().str());
  }
  Variable h = (*pos_encoding)(x);
  for (size_t i = 0; i < layers->size(); ++i) h = layer(i)(h, mask);
  return final_norm ? (*final_norm)(h) : h;
}

std::vector<Tensor> TransformerEncoder::attention_weights() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < layers->size(); ++i) out.push_back(layer(i).attention->attention_weights());
  return out;
}

}  // namespace minigrad::nn

#include "minigrad/nn/transformer_encoder_layer.h"

#include <cmath>

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/positional_options.h"

namespace minigrad::nn {

namespace {
TransformerEncoderLayerOptions with_sizes(TransformerEncoderLayerOptions options, int64_t d_model,
                                          int64_t nhead) {
  detail::set_positional(options, &TransformerEncoderLayerOptions::d_model, d_model,
                         "TransformerEncoderLayer", "d_model");
  detail::set_positional(options, &TransformerEncoderLayerOptions::nhead, nhead, "TransformerEncoderLayer",
                         "nhead");
  return options;
}
}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead,
                                                 TransformerEncoderLayerOptions options)
    : TransformerEncoderLayer(with_sizes(options, d_model, nhead)) {}

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& opts) : options(opts) {
  if (opts.dim_feedforward <= 0)
    throw ValueError("TransformerEncoderLayer",
                     "dim_feedforward must be positive, got " + std::to_string(opts.dim_feedforward));
  // Registered in PyTorch's order, so that the state dicts list their entries alike.
  MultiHeadAttentionOptions attention = pytorch_attention_options(opts.d_model, opts.nhead);
  attention.dropout = opts.dropout;
  attention.batch_first = opts.batch_first;
  attention.generator = opts.generator;
  self_attn = register_module("self_attn", std::make_shared<MultiHeadAttention>(attention));
  linear1 = register_module(
      "linear1", std::make_shared<Linear>(opts.d_model, opts.dim_feedforward, true, opts.generator));
  dropout = register_module("dropout", std::make_shared<Dropout>(opts.dropout, opts.generator));
  linear2 = register_module(
      "linear2", std::make_shared<Linear>(opts.dim_feedforward, opts.d_model, true, opts.generator));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(opts.d_model, opts.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(opts.d_model, opts.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(opts.dropout, opts.generator));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(opts.dropout, opts.generator));
}

Variable TransformerEncoderLayer::forward(const Variable& src, const AttentionMask& mask) const {
  auto self_attention = [&](const Variable& x) { return (*self_attn)(x, x, x, mask); };
  auto feed_forward_block = [&](const Variable& x) {
    return feed_forward(x, *linear1, *linear2, options.activation, dropout.get());
  };
  // The d2l EncoderLayer's computation (AddNorm's add_norm, feed_forward), with the norms and dropouts
  // under PyTorch's names.
  const Variable x = add_norm(src, self_attention, *norm1, *dropout1, options.norm_first);
  return add_norm(x, feed_forward_block, *norm2, *dropout2, options.norm_first);
}

}  // namespace minigrad::nn

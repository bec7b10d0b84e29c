#include "minigrad/nn/decoder.h"

#include <cmath>

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad::nn {

DecoderLayer::DecoderLayer(const TransformerLayerOptions& opts, bool with_cross_attention) : options(opts) {
  const MultiHeadAttentionOptions attention_options{.num_hiddens = opts.num_hiddens,
                                                    .num_heads = opts.num_heads,
                                                    .dropout = opts.attention_dropout.value_or(opts.dropout),
                                                    .bias = opts.bias,
                                                    .generator = opts.generator};
  auto addnorm = [&] {
    return std::make_shared<AddNorm>(opts.num_hiddens, opts.dropout, opts.generator, opts.norm_first);
  };
  self_attention = register_module("self_attention", std::make_shared<MultiHeadAttention>(attention_options));
  addnorm1 = register_module("addnorm1", addnorm());
  if (with_cross_attention) {
    cross_attention =
        register_module("cross_attention", std::make_shared<MultiHeadAttention>(attention_options));
    addnorm2 = register_module("addnorm2", addnorm());
  }
  ffn = register_module("ffn", std::make_shared<PositionWiseFFN>(opts.num_hiddens, opts.ffn_num_hiddens,
                                                                 opts.activation, opts.generator));
  addnorm3 = register_module("addnorm3", addnorm());
}

Variable DecoderLayer::sublayers(const Variable& x, const AddNorm::Sublayer& self_attend,
                                 const AddNorm::Sublayer& cross_attend) const {
  Variable y = (*addnorm1)(x, self_attend);
  if (cross_attention) y = (*addnorm2)(y, cross_attend);
  return (*addnorm3)(y, [&](const Variable& v) { return (*ffn)(v); });
}

namespace {

void check_memory(const Variable& x, const Variable& memory, int64_t num_hiddens) {
  if (!memory.defined() || memory.rank() != 3 || memory.shape()[0] != x.shape()[0] ||
      memory.shape()[2] != num_hiddens) {
    throw ShapeError("DecoderLayer", "expects memory (B = " + std::to_string(x.shape()[0]) + ", S, " +
                                         std::to_string(num_hiddens) + ") from the encoder, got " +
                                         (memory.defined() ? memory.shape().str() : std::string("none")));
  }
}

void check_input(const Variable& x, int64_t num_hiddens) {
  if (x.rank() != 3 || x.shape()[2] != num_hiddens) {
    throw ShapeError("DecoderLayer",
                     "expects x (B, T, " + std::to_string(num_hiddens) + "), got " + x.shape().str());
  }
}

}  // namespace

Variable DecoderLayer::forward(const Variable& x, const Variable& memory, const DecoderMasks& masks) const {
  check_input(x, options.num_hiddens);
  if (cross_attention) check_memory(x, memory, options.num_hiddens);
  // Causal, and padding keys hidden: PyTorch's tgt_mask plus tgt_key_padding_mask.
  const AttentionMask self_mask{.valid_lens = masks.target_valid_lens, .causal = true};
  const AttentionMask cross_mask{.valid_lens = masks.source_valid_lens};
  return sublayers(
      x, [&](const Variable& q) { return (*self_attention)(q, q, q, self_mask); },
      [&](const Variable& q) { return (*cross_attention)(q, memory, memory, cross_mask); });
}

Variable DecoderLayer::forward_step(const Variable& x, LayerCache& cache,
                                    const Tensor& source_valid_lens) const {
  check_input(x, options.num_hiddens);
  if (cross_attention && !cache.cross_keys.defined()) {
    throw ValueError("DecoderLayer",
                     "forward_step needs the memory's keys and values in the cache: make it with "
                     "TransformerDecoder::start_cache");
  }
  const int64_t batch = x.shape()[0], n = x.shape()[1];
  const int64_t t = cache.self_keys.defined() ? cache.self_keys.shape()[2] : 0;
  if (t > 0 && cache.self_keys.shape()[0] != batch) {
    throw ShapeError("DecoderLayer", "forward_step got a batch of " + std::to_string(batch) +
                                         " rows for a cache of " +
                                         std::to_string(cache.self_keys.shape()[0]));
  }
  auto self_attend = [&](const Variable& q) {
    const Variable k = self_attention->project_keys(q), v = self_attention->project_values(q);  // (B,h,n,hs)
    // Appending copies the cache, O(t) per step: the same order as attending to it, and simpler than a
    // preallocated buffer with a moving end.
    cache.self_keys = t > 0 ? concat({cache.self_keys, k}, 2) : k;  // (B, h, t + n, hs)
    cache.self_values = t > 0 ? concat({cache.self_values, v}, 2) : v;
    // New position t + i sees keys 0 .. t + i: a per-query valid length. One new position sees them all.
    AttentionMask mask;
    if (n > 1) {
      mask.valid_lens =
          Tensor::arange(static_cast<double>(t + 1), static_cast<double>(t + n + 1), 1, DType::Int64)
              .unsqueeze(0)
              .expand({batch, n});
    }
    return self_attention->attend(q, cache.self_keys, cache.self_values, mask);
  };
  auto cross_attend = [&](const Variable& q) {
    return cross_attention->attend(q, cache.cross_keys, cache.cross_values,
                                   {.valid_lens = source_valid_lens});
  };
  return sublayers(x, self_attend, cross_attend);
}

void DecoderCache::select_rows(const Tensor& rows) {
  auto pick = [&](Variable& v) {
    if (v.defined()) v = Variable(index_select(v.data(), 0, rows));
  };
  for (LayerCache& layer : layers) {
    pick(layer.self_keys);
    pick(layer.self_values);
    pick(layer.cross_keys);
    pick(layer.cross_values);
  }
  if (source_valid_lens.defined()) source_valid_lens = index_select(source_valid_lens, 0, rows);
}

TransformerDecoder::TransformerDecoder(const TransformerDecoderOptions& opts) : options(opts) {
  std::tie(embedding, pos_encoding) = register_token_embedding(*this, opts.layer, opts.tokens);
  const TransformerLayerOptions& layer = opts.layer;
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < opts.num_layers; ++i)
    layers->push_back(std::make_shared<DecoderLayer>(layer, opts.cross_attention));
  if (opts.final_norm.value_or(layer.norm_first))
    final_norm = register_module("final_norm", std::make_shared<LayerNorm>(layer.num_hiddens));
  if (opts.tie_weights) {
    output_bias = register_parameter("output_bias", Tensor::zeros({opts.tokens.vocab_size}));
  } else {
    output = register_module(
        "output", std::make_shared<Linear>(layer.num_hiddens, opts.tokens.vocab_size, true, layer.generator));
  }
}

Variable TransformerDecoder::embed(const Tensor& tokens, int64_t start) const {
  return (*pos_encoding)(scaled_embedding(*embedding, tokens, "TransformerDecoder"), start);
}

Variable TransformerDecoder::logits(const Variable& x) const {
  const Variable h = final_norm ? (*final_norm)(x) : x;
  if (output) return (*output)(h);
  // Tied: h·Eᵀ + b, with E the (vocab_size, num_hiddens) embedding table.
  return matmul(h, transpose(embedding->weight, 0, 1)) + output_bias;
}

Variable TransformerDecoder::forward(const Tensor& tokens, const Variable& memory,
                                     const DecoderMasks& masks) const {
  Variable x = embed(tokens, 0);
  for (size_t i = 0; i < layers->size(); ++i) x = layer(i)(x, memory, masks);
  return logits(x);
}

DecoderCache TransformerDecoder::start_cache(const Variable& memory, const Tensor& source_valid_lens) {
  DecoderCache cache;
  cache.layers.resize(layers->size());
  cache.source_valid_lens = source_valid_lens;
  if (!options.cross_attention) return cache;
  const int64_t d = options.layer.num_hiddens;
  if (!memory.defined() || memory.rank() != 3 || memory.shape()[2] != d) {
    throw ShapeError("TransformerDecoder",
                     "start_cache expects memory (B, S, " + std::to_string(d) + "), got " +
                         (memory.defined() ? memory.shape().str() : std::string("none")));
  }
  for (size_t i = 0; i < layers->size(); ++i) {
    cache.layers[i].cross_keys = layer(i).cross_attention->project_keys(memory);
    cache.layers[i].cross_values = layer(i).cross_attention->project_values(memory);
  }
  return cache;
}

Variable TransformerDecoder::forward_step(const Tensor& tokens, DecoderCache& cache) const {
  if (cache.layers.size() != layers->size()) {
    throw ValueError("TransformerDecoder", "the cache has " + std::to_string(cache.layers.size()) +
                                               " layers, the decoder " + std::to_string(layers->size()) +
                                               ": make it with this decoder's start_cache");
  }
  Variable x = embed(tokens, cache.length);
  for (size_t i = 0; i < layers->size(); ++i)
    x = layer(i).forward_step(x, cache.layers[i], cache.source_valid_lens);
  cache.length += tokens.shape()[1];
  return logits(x);
}

std::vector<Tensor> TransformerDecoder::cross_attention_weights() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < layers->size(); ++i) {
    if (layer(i).cross_attention) out.push_back(layer(i).cross_attention->attention_weights());
  }
  return out;
}

Transformer::Transformer(const TransformerOptions& opts) : options(opts) {
  if (!opts.decoder.cross_attention) {
    throw ValueError("Transformer",
                     "the decoder must attend to the encoder's output: decoder.cross_attention "
                     "is false");
  }
  const int64_t source_width = opts.encoder.layer.num_hiddens, target_width = opts.decoder.layer.num_hiddens;
  if (target_width != source_width) {
    throw ValueError("Transformer", "the decoder's num_hiddens (" + std::to_string(target_width) +
                                        ") must be the encoder's (" + std::to_string(source_width) +
                                        "): its cross-attention reads the encoder's output");
  }
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(opts.encoder));
  decoder = register_module("decoder", std::make_shared<TransformerDecoder>(opts.decoder));
}

Variable Transformer::encode(const Tensor& source, const Tensor& source_valid_lens) const {
  return (*encoder)(source, {.valid_lens = source_valid_lens});
}

Variable Transformer::forward(const Tensor& source, const Tensor& target, const DecoderMasks& masks) const {
  return (*decoder)(target, encode(source, masks.source_valid_lens), masks);
}

}  // namespace minigrad::nn

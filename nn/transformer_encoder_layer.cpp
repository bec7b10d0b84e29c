#include "minigrad/nn/transformer_encoder_layer.h"

#include <cmath>

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& opts) : options(opts) {
  const int64_t e = opts.embed_dim;
  if (e <= 0 || opts.num_heads <= 0 || e % opts.num_heads != 0) {
    throw ValueError("MultiheadAttention", "embed_dim (" + std::to_string(e) +
                                               ") must be a positive multiple of num_heads (" +
                                               std::to_string(opts.num_heads) + ")");
  }
  // PyTorch's initialisation: Xavier-uniform projections, zero biases, out_proj as a Linear's weight.
  const double bound = std::sqrt(6.0 / static_cast<double>(e + 3 * e));
  in_proj_weight = register_parameter(
      "in_proj_weight", Tensor::uniform({3 * e, e}, -bound, bound, DType::Float32, opts.generator));
  if (opts.bias) in_proj_bias = register_parameter("in_proj_bias", Tensor::zeros({3 * e}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(e, e, opts.bias, opts.generator));
  if (opts.bias) out_proj->bias.data().fill_(0);
}

std::string MultiheadAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(options.embed_dim) +
         ", num_heads=" + std::to_string(options.num_heads) +
         ", batch_first=" + (options.batch_first ? "True" : "False");
}

Variable MultiheadAttention::forward(const Variable& query, const Variable& key, const Variable& value,
                                     const AttentionMask& mask) const {
  const int64_t e = options.embed_dim, h = options.num_heads;
  if (query.rank() != 3 || key.rank() != 3 || value.rank() != 3 || query.shape()[2] != e ||
      key.shape()[2] != e || value.shape()[2] != e || key.shape() != value.shape()) {
    throw ShapeError("MultiheadAttention", std::string("expects query, key and value ") +
                                               (options.batch_first ? "(B, n, " : "(n, B, ") +
                                               std::to_string(e) + "), key and value alike, got " +
                                               query.shape().str() + ", " + key.shape().str() + ", " +
                                               value.shape().str());
  }
  // Batch first inside: (n, B, E) -> (B, n, E).
  auto batch_first = [&](const Variable& x) { return options.batch_first ? x : transpose(x, 0, 1); };
  const Variable q_in = batch_first(query), k_in = batch_first(key), v_in = batch_first(value);
  if (q_in.shape()[0] != k_in.shape()[0]) {
    throw ShapeError("MultiheadAttention", "query and key differ in batch size: " + query.shape().str() +
                                               " and " + key.shape().str());
  }
  // in_proj's thirds are W_q, W_k and W_v (and their biases); out_proj is W_o.
  auto third = [&](int64_t part) {  // 0: queries, 1: keys, 2: values
    return Projection{slice(in_proj_weight, 0, part * e, (part + 1) * e),
                      options.bias ? slice(in_proj_bias, 0, part * e, (part + 1) * e) : Variable()};
  };
  const bool drop = is_training() && options.dropout > 0;
  Generator& generator = options.generator != nullptr ? *options.generator : default_generator();
  auto attend = [&](const Variable& q, const Variable& k, const Variable& v) {
    AttentionResult result = scaled_dot_product_attention(
        q, k, v,
        {.mask = mask, .dropout = drop ? options.dropout : 0, .seed = drop ? generator.next_u64() : 0});
    attention_weights_ = result.weights;
    return result.output;  // (B, h, n_q, E/h)
  };
  const Variable output =
      attend_heads(q_in, third(0), project_heads(k_in, third(1), h), project_heads(v_in, third(2), h),
                   {out_proj->weight, out_proj->bias}, attend);
  return batch_first(output);  // the caller's layout again (a transpose is its inverse)
}

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& opts) : options(opts) {
  if (opts.dim_feedforward <= 0)
    throw ValueError("TransformerEncoderLayer",
                     "dim_feedforward must be positive, got " + std::to_string(opts.dim_feedforward));
  // Registered in PyTorch's order, so that the state dicts list their entries alike.
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(
                                               MultiheadAttentionOptions{.embed_dim = opts.d_model,
                                                                         .num_heads = opts.nhead,
                                                                         .dropout = opts.dropout,
                                                                         .batch_first = opts.batch_first,
                                                                         .generator = opts.generator}));
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
  auto feed_forward = [&](const Variable& x) {
    const Variable hidden = (*linear1)(x);
    const Variable activated = options.activation == Activation::ReLU ? relu(hidden) : gelu(hidden);
    return (*linear2)((*dropout)(activated));
  };
  // AddNorm's computation, with the norms and dropouts under PyTorch's names.
  const Variable x = add_norm(src, self_attention, *norm1, *dropout1, options.norm_first);
  return add_norm(x, feed_forward, *norm2, *dropout2, options.norm_first);
}

}  // namespace minigrad::nn

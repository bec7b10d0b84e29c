#include "minigrad/nn/attention.h"

#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/ops.h"

namespace minigrad::nn {

DotProductAttention::DotProductAttention(double p, Generator* generator) {
  dropout = register_module("dropout", std::make_shared<Dropout>(p, generator));
}

Variable DotProductAttention::forward(const Variable& queries, const Variable& keys, const Variable& values,
                                      const AttentionMask& mask) const {
  const int r = queries.rank();
  if (r < 3 || keys.rank() != r || values.rank() != r || queries.shape()[r - 1] != keys.shape()[r - 1] ||
      keys.shape()[r - 2] != values.shape()[r - 2]) {
    throw ShapeError("DotProductAttention",
                     "expects queries (B, …, n_q, d), keys (B, …, n_k, d), values (B, …, n_k, "
                     "d_v), got " +
                         queries.shape().str() + ", " + keys.shape().str() + ", " + values.shape().str());
  }
  // A dropout in training draws its mask's seed from the module's generator (as nn::Dropout would).
  const bool drop = dropout->is_training() && dropout->p > 0;
  const uint64_t seed =
      drop ? (dropout->generator != nullptr ? *dropout->generator : default_generator()).next_u64() : 0;
  AttentionResult result = scaled_dot_product_attention(
      queries, keys, values,
      {.mask = mask, .dropout = drop ? dropout->p : 0, .seed = seed, .kernel = kernel});
  attention_weights_ = result.weights;
  return result.output;  // (B, …, n_q, d_v)
}

void set_attention_kernel(Module& module, AttentionKernel kernel) {
  if (auto* attention = dynamic_cast<DotProductAttention*>(&module)) attention->kernel = kernel;
  for (const auto& [name, child] : module.children()) set_attention_kernel(*child, kernel);
}

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& opts) : options(opts) {
  if (opts.num_hiddens <= 0 || opts.num_heads <= 0 || opts.num_hiddens % opts.num_heads != 0) {
    throw ValueError("MultiHeadAttention", "num_hiddens (" + std::to_string(opts.num_hiddens) +
                                               ") must be a positive multiple of num_heads (" +
                                               std::to_string(opts.num_heads) + ")");
  }
  auto size_or_hiddens = [&](int64_t size) { return size > 0 ? size : opts.num_hiddens; };
  options.query_size = size_or_hiddens(opts.query_size);
  options.key_size = size_or_hiddens(opts.key_size);
  options.value_size = size_or_hiddens(opts.value_size);
  attention =
      register_module("attention", std::make_shared<DotProductAttention>(opts.dropout, opts.generator));
  auto linear = [&](int64_t in) {
    return std::make_shared<Linear>(in, opts.num_hiddens, opts.bias, opts.generator);
  };
  W_q = register_module("W_q", linear(options.query_size));
  W_k = register_module("W_k", linear(options.key_size));
  W_v = register_module("W_v", linear(options.value_size));
  W_o = register_module("W_o", linear(opts.num_hiddens));
}

Variable project_heads(const Variable& x, const Projection& projection, int64_t num_heads) {
  const Variable projected = linear(x, projection.weight, projection.bias);  // (B, n, E)
  const int64_t e = projected.shape()[2];
  // (B, n, E) -> (B, n, h, E/h) -> (B, h, n, E/h)
  return permute(reshape(projected, {x.shape()[0], x.shape()[1], num_heads, e / num_heads}), {0, 2, 1, 3});
}

Variable attend_heads(const Variable& queries, const Projection& query, const Variable& heads_k,
                      const Variable& heads_v, const Projection& output, const HeadAttention& attend) {
  const int64_t h = heads_k.shape()[1];
  const Variable heads = attend(project_heads(queries, query, h), heads_k, heads_v);  // (B, h, n_q, E/h)
  // (B, h, n_q, E/h) -> (B, n_q, h, E/h) -> (B, n_q, E)
  const Variable merged =
      reshape(permute(heads, {0, 2, 1, 3}), {queries.shape()[0], queries.shape()[1], h * heads.shape()[3]});
  return linear(merged, output.weight, output.bias);
}

namespace {
Projection projection_of(const Linear& layer) {
  return {layer.weight, layer.bias};
}
}  // namespace

Variable MultiHeadAttention::project_keys(const Variable& keys) const {
  if (keys.rank() != 3)
    throw ShapeError("MultiHeadAttention", "expects keys (B, n_k, k), got " + keys.shape().str());
  return project_heads(keys, projection_of(*W_k), options.num_heads);
}

Variable MultiHeadAttention::project_values(const Variable& values) const {
  if (values.rank() != 3)
    throw ShapeError("MultiHeadAttention", "expects values (B, n_k, v), got " + values.shape().str());
  return project_heads(values, projection_of(*W_v), options.num_heads);
}

Variable MultiHeadAttention::forward(const Variable& queries, const Variable& keys, const Variable& values,
                                     const AttentionMask& mask) const {
  if (queries.rank() != 3 || keys.rank() != 3 || values.rank() != 3 || keys.shape()[1] != values.shape()[1] ||
      queries.shape()[0] != keys.shape()[0] || keys.shape()[0] != values.shape()[0]) {
    throw ShapeError("MultiHeadAttention",
                     "expects queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v), got " +
                         queries.shape().str() + ", " + keys.shape().str() + ", " + values.shape().str());
  }
  return attend(queries, project_keys(keys), project_values(values), mask);
}

Variable MultiHeadAttention::attend(const Variable& queries, const Variable& heads_k, const Variable& heads_v,
                                    const AttentionMask& mask) const {
  if (queries.rank() != 3 || heads_k.rank() != 4 || heads_k.shape() != heads_v.shape() ||
      heads_k.shape()[0] != queries.shape()[0] || heads_k.shape()[1] != options.num_heads) {
    throw ShapeError("MultiHeadAttention",
                     "attend expects queries (B, n_q, q) and projected keys and values (B, heads, n_k, "
                     "head) alike, got " +
                         queries.shape().str() + ", " + heads_k.shape().str() + ", " + heads_v.shape().str());
  }
  return attend_heads(queries, projection_of(*W_q), heads_k, heads_v, projection_of(*W_o),
                      [&](const Variable& q, const Variable& k, const Variable& v) {
                        return (*attention)(q, k, v, mask);  // (B, h, n_q, head)
                      });
}

}  // namespace minigrad::nn

#include "minigrad/nn/attention.h"

#include <cmath>

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

MultiHeadAttentionOptions pytorch_attention_options(int64_t embed_dim, int64_t num_heads) {
  return {.num_hiddens = embed_dim,
          .num_heads = num_heads,
          .bias = true,
          .batch_first = false,
          .names = ParameterNames::PyTorch};
}

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& opts) : options(opts) {
  const bool pytorch = opts.names == ParameterNames::PyTorch;
  const int64_t e = opts.num_hiddens;
  if (e <= 0 || opts.num_heads <= 0 || e % opts.num_heads != 0) {
    throw ValueError(name(), std::string(pytorch ? "embed_dim (" : "num_hiddens (") + std::to_string(e) +
                                 ") must be a positive multiple of num_heads (" +
                                 std::to_string(opts.num_heads) + ")");
  }
  auto size_or_hiddens = [&](int64_t size) { return size > 0 ? size : e; };
  options.query_size = size_or_hiddens(opts.query_size);
  options.key_size = size_or_hiddens(opts.key_size);
  options.value_size = size_or_hiddens(opts.value_size);
  if (pytorch && (options.query_size != e || options.key_size != e || options.value_size != e)) {
    throw ValueError(name(),
                     "PyTorch's names (in_proj_weight) need queries, keys and values of width embed_dim");
  }
  if (pytorch) {
    // Registered in PyTorch's order. PyTorch's initialisation: Xavier-uniform in_proj, zero biases,
    // out_proj as a Linear's weight.
    const double bound = std::sqrt(6.0 / static_cast<double>(e + 3 * e));
    in_proj_weight = register_parameter(
        "in_proj_weight", Tensor::uniform({3 * e, e}, -bound, bound, DType::Float32, opts.generator));
    if (opts.bias) in_proj_bias = register_parameter("in_proj_bias", Tensor::zeros({3 * e}));
    out_proj = register_module("out_proj", std::make_shared<Linear>(e, e, opts.bias, opts.generator));
    if (opts.bias) out_proj->bias.data().fill_(0);
    attention =
        register_module("attention", std::make_shared<DotProductAttention>(opts.dropout, opts.generator));
    return;
  }
  attention =
      register_module("attention", std::make_shared<DotProductAttention>(opts.dropout, opts.generator));
  auto linear = [&](int64_t in) { return std::make_shared<Linear>(in, e, opts.bias, opts.generator); };
  W_q = register_module("W_q", linear(options.query_size));
  W_k = register_module("W_k", linear(options.key_size));
  W_v = register_module("W_v", linear(options.value_size));
  W_o = register_module("W_o", linear(e));
}

std::string MultiHeadAttention::name() const {
  return options.names == ParameterNames::PyTorch ? "MultiheadAttention" : "MultiHeadAttention";
}

std::string MultiHeadAttention::extra_repr() const {
  if (options.names != ParameterNames::PyTorch) return "";
  return "embed_dim=" + std::to_string(options.num_hiddens) +
         ", num_heads=" + std::to_string(options.num_heads) +
         ", batch_first=" + (options.batch_first ? "True" : "False");
}

MultiHeadAttention::Projection MultiHeadAttention::projection(int64_t part) const {
  if (options.names == ParameterNames::D2l) {
    const Linear& layer = part == 0 ? *W_q : part == 1 ? *W_k : part == 2 ? *W_v : *W_o;
    return {layer.weight, layer.bias};
  }
  if (part == 3) return {out_proj->weight, out_proj->bias};
  // in_proj's thirds are W_q, W_k and W_v, and in_proj_bias's their biases.
  const int64_t e = options.num_hiddens;
  return {slice(in_proj_weight, 0, part * e, (part + 1) * e),
          options.bias ? slice(in_proj_bias, 0, part * e, (part + 1) * e) : Variable()};
}

Variable MultiHeadAttention::project_heads(const Variable& x, int64_t part) const {
  const Projection p = projection(part);
  const int64_t h = options.num_heads, e = options.num_hiddens;
  // (B, n, in) -> (B, n, E) -> (B, n, h, E/h) -> (B, h, n, E/h)
  return permute(reshape(linear(x, p.weight, p.bias), {x.shape()[0], x.shape()[1], h, e / h}), {0, 2, 1, 3});
}

Variable MultiHeadAttention::project_keys(const Variable& keys) const {
  if (keys.rank() != 3 || keys.shape()[2] != options.key_size)
    throw ShapeError(
        name(), "expects keys (B, n_k, " + std::to_string(options.key_size) + "), got " + keys.shape().str());
  return project_heads(keys, 1);
}

Variable MultiHeadAttention::project_values(const Variable& values) const {
  if (values.rank() != 3 || values.shape()[2] != options.value_size)
    throw ShapeError(name(), "expects values (B, n_k, " + std::to_string(options.value_size) + "), got " +
                                 values.shape().str());
  return project_heads(values, 2);
}

Variable MultiHeadAttention::forward(const Variable& queries, const Variable& keys, const Variable& values,
                                     const AttentionMask& mask) const {
  auto layout = [&](const char* n, int64_t width) {  // "(B, n_q, 4)", or "(n_q, B, 4)" sequence first
    const std::string w = std::to_string(width);
    return options.batch_first ? "(B, " + std::string(n) + ", " + w + ")"
                               : "(" + std::string(n) + ", B, " + w + ")";
  };
  if (queries.rank() != 3 || keys.rank() != 3 || values.rank() != 3 ||
      queries.shape()[2] != options.query_size || keys.shape()[2] != options.key_size ||
      values.shape()[2] != options.value_size || keys.shape()[0] != values.shape()[0] ||
      keys.shape()[1] != values.shape()[1]) {
    throw ShapeError(name(), "expects queries " + layout("n_q", options.query_size) + ", keys " +
                                 layout("n_k", options.key_size) + " and values " +
                                 layout("n_k", options.value_size) + ", got " + queries.shape().str() + ", " +
                                 keys.shape().str() + ", " + values.shape().str());
  }
  // Batch first inside: (n, B, E) -> (B, n, E), and the output back to the caller's layout (a transpose is
  // its own inverse).
  auto batch_first = [&](const Variable& x) { return options.batch_first ? x : transpose(x, 0, 1); };
  const Variable q = batch_first(queries), k = batch_first(keys), v = batch_first(values);
  if (q.shape()[0] != k.shape()[0]) {
    throw ShapeError(name(), "queries and keys differ in batch size: " + queries.shape().str() + " and " +
                                 keys.shape().str());
  }
  return batch_first(attend(q, project_keys(k), project_values(v), mask));
}

Variable MultiHeadAttention::attend(const Variable& queries, const Variable& heads_k, const Variable& heads_v,
                                    const AttentionMask& mask) const {
  if (queries.rank() != 3 || queries.shape()[2] != options.query_size || heads_k.rank() != 4 ||
      heads_k.shape() != heads_v.shape() || heads_k.shape()[0] != queries.shape()[0] ||
      heads_k.shape()[1] != options.num_heads) {
    throw ShapeError(name(), "attend expects queries (B, n_q, " + std::to_string(options.query_size) +
                                 ") and projected keys and values (B, heads, n_k, head) alike, got " +
                                 queries.shape().str() + ", " + heads_k.shape().str() + ", " +
                                 heads_v.shape().str());
  }
  const Variable heads = (*attention)(project_heads(queries, 0), heads_k, heads_v, mask);  // (B, h, n_q, E/h)
  // (B, h, n_q, E/h) -> (B, n_q, h, E/h) -> (B, n_q, E)
  const Variable merged =
      reshape(permute(heads, {0, 2, 1, 3}), {queries.shape()[0], queries.shape()[1], options.num_hiddens});
  const Projection output = projection(3);
  return linear(merged, output.weight, output.bias);
}

}  // namespace minigrad::nn

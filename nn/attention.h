// Attention, as d2l's "Attention Mechanisms and Transformers" chapters and the NYU Deep Learning lecture
// on attention describe it.
//
// Scaled dot-product attention of queries Q (…, n_q, d), keys K (…, n_k, d), values V (…, n_k, d_v):
//
//   scores  = Q·Kᵀ / √d                       (…, n_q, n_k)
//   weights = masked softmax(scores) over the keys
//   output  = dropout(weights)·V              (…, n_q, d_v)
//
// Masking hides keys from queries: padding at the end of a shorter sequence, or the future in a causal
// model. Masked scores are set to -inf before the softmax, so their weights are exactly 0, and a query with
// every key masked gets weights of 0 (it attends to nothing), softmax's convention for a fully masked row
// (tensor/softmax.h). (d2l masks with -1e6 instead, which gives such a query uniform weights; PyTorch's
// attention gives it NaN.)
#pragma once

#include "minigrad/autograd/functions.h"
#include "minigrad/nn/dropout.h"
#include "minigrad/nn/linear.h"
#include "minigrad/nn/module.h"

namespace minigrad::nn {

// The mask (which keys each query may attend to) and the masked softmax are ops of the autograd layer
// (tensor/attention.h, autograd/attention.cpp); they are named here too, where attention is built.
using minigrad::AttentionKernel;
using minigrad::AttentionMask;
using minigrad::masked_softmax;

class DotProductAttention : public Layer<DotProductAttention> {
 public:
  explicit DotProductAttention(double dropout = 0, Generator* generator = nullptr);

  // Q (B, …, n_q, d), K (B, …, n_k, d), V (B, …, n_k, d_v) -> (B, …, n_q, d_v)
  Variable forward(const Variable& queries, const Variable& keys, const Variable& values,
                   const AttentionMask& mask = {}) const;

  // The weights of the last forward pass, (B, …, n_q, n_k), before dropout.
  const Tensor& attention_weights() const { return attention_weights_; }

  std::string name() const override { return "DotProductAttention"; }

  std::shared_ptr<Dropout> dropout;
  // Fused (the default) or Composed: the same numbers, see AttentionKernel.
  AttentionKernel kernel = AttentionKernel::Fused;

 private:
  // A record of the last call, kept for inspection, not part of the model: a const model records it too,
  // so one module must not run forward in two threads at once.
  mutable Tensor attention_weights_;
};

// Whose names a multi-head attention's parameters take: the textbook's or PyTorch's.
enum class ParameterNames {
  // d2l's: W_q, W_k, W_v and W_o, four Linear layers (and the child `attention`).
  D2l,
  // PyTorch's nn.MultiheadAttention's: in_proj_weight (3·E, E), W_q, W_k and W_v stacked; in_proj_bias
  // (3·E); out_proj, a Linear. With PyTorch's initialisation, so that its state dict loads
  // (optim::load_weights) and gives the same output.
  PyTorch,
};

// d2l's defaults; PyTorch's nn.MultiheadAttention(embed_dim, num_heads) is
//   {.num_hiddens = embed_dim, .num_heads = num_heads, .bias = true, .batch_first = false,
//    .names = ParameterNames::PyTorch}   (pytorch_attention_options(embed_dim, num_heads) below)
struct MultiHeadAttentionOptions {
  int64_t num_hiddens = 0;  // PyTorch's embed_dim
  int64_t num_heads = 1;
  double dropout = 0;  // on the attention weights, in training
  bool bias = false;   // in the four projections
  // The widths of the incoming queries, keys and values; 0 means num_hiddens. Different sizes make the
  // same module do cross-attention (queries from one sequence, keys and values from another). PyTorch's
  // names take num_hiddens only.
  int64_t query_size = 0;
  int64_t key_size = 0;
  int64_t value_size = 0;
  bool batch_first = true;  // false: inputs and output (n, B, ·), PyTorch's default
  ParameterNames names = ParameterNames::D2l;
  // Draws the initial weights and the dropout masks; nullptr: this thread's default. Not owned.
  Generator* generator = nullptr;
};

// PyTorch's nn.MultiheadAttention(embed_dim, num_heads) defaults: biases, sequence first, PyTorch's names.
MultiHeadAttentionOptions pytorch_attention_options(int64_t embed_dim, int64_t num_heads);

// h heads, each attending in its own num_hiddens/h-wide subspace:
//   head_i = attention(Q·W_q,i, K·W_k,i, V·W_v,i),   output = concat(head_1 … head_h)·W_o
// The heads are split by a reshape to (B, n, h, num_hiddens/h) and a transpose to (B, h, n, …), so that
// one batched matmul serves every head, and merged back the same way. One class for d2l's
// MultiHeadAttention and PyTorch's nn.MultiheadAttention: they differ in their parameters' names and
// initialisation (options.names) and their defaults, not in what they compute.
class MultiHeadAttention : public Layer<MultiHeadAttention> {
 public:
  explicit MultiHeadAttention(const MultiHeadAttentionOptions& options);
  MultiHeadAttention(int64_t num_hiddens, int64_t num_heads, double dropout, bool bias = false)
      : MultiHeadAttention(MultiHeadAttentionOptions{num_hiddens, num_heads, dropout, bias}) {}
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      MultiHeadAttention,
      ConstructorLines<void(const MultiHeadAttentionOptions&), void(int64_t, int64_t, double),
                       void(int64_t, int64_t, double, bool)>,
      A...>
  explicit MultiHeadAttention(A&&...) : MultiHeadAttention(MultiHeadAttentionOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::MultiHeadAttention takes (num_hiddens, num_heads, dropout), then bias; or "
                  "(MultiHeadAttentionOptions), for PyTorch's (embed_dim, num_heads) "
                  "nn::pytorch_attention_options(embed_dim, num_heads)");
  }

  // queries (B, n_q, query_size), keys (B, n_k, key_size), values (B, n_k, value_size)
  //   -> (B, n_q, num_hiddens); (n, B, ·) each without batch_first.
  // PyTorch also returns the weights averaged over heads; here attention_weights() has them per head.
  Variable forward(const Variable& queries, const Variable& keys, const Variable& values,
                   const AttentionMask& mask = {}) const;

  // The two halves of forward(), batch first, for incremental decoding, which projects each key and
  // value once and keeps them (a key/value cache) instead of re-projecting the whole prefix at every step:
  //   forward(q, k, v, mask) == attend(q, project_keys(k), project_values(v), mask)
  // keys (B, n_k, key_size) -> (B, num_heads, n_k, num_hiddens/num_heads), split into heads
  Variable project_keys(const Variable& keys) const;
  Variable project_values(const Variable& values) const;
  // queries (B, n_q, query_size), heads_k and heads_v (B, num_heads, n_k, num_hiddens/num_heads)
  //   -> (B, n_q, num_hiddens)
  Variable attend(const Variable& queries, const Variable& heads_k, const Variable& heads_v,
                  const AttentionMask& mask = {}) const;

  // Per-head weights of the last forward pass: (B, num_heads, n_q, n_k), before dropout.
  const Tensor& attention_weights() const { return attention->attention_weights(); }

  // "MultiHeadAttention", or PyTorch's "MultiheadAttention" with its names, as each prints.
  std::string name() const override;
  std::string extra_repr() const override;

  std::shared_ptr<DotProductAttention> attention;  // the per-head step, both names
  std::shared_ptr<Linear> W_q, W_k, W_v, W_o;      // d2l's names; null with PyTorch's
  Variable in_proj_weight;                         // PyTorch's names: (3·num_hiddens, num_hiddens)
  Variable in_proj_bias;                           // (3·num_hiddens), or undefined without bias
  std::shared_ptr<Linear> out_proj;                // null with d2l's names
  MultiHeadAttentionOptions options;

 private:
  struct Projection {
    Variable weight;  // (out, in)
    Variable bias;    // (out), or undefined
  };
  // Projection 0, 1, 2, 3: queries', keys', values' and the output's, under either naming.
  Projection projection(int64_t part) const;
  // x (B, n, in) -> x·Wᵀ + b (B, n, E) -> (B, n, h, E/h) -> (B, h, n, E/h): a view of the projection.
  Variable project_heads(const Variable& x, int64_t part) const;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// PyTorch's names for the options, from before the two attentions were one class: converts to
// MultiHeadAttentionOptions with PyTorch's names.
struct [[deprecated(
    "use nn::MultiHeadAttentionOptions with .names = nn::ParameterNames::PyTorch "
    "(nn::pytorch_attention_options)")]] MultiheadAttentionOptions {
  int64_t embed_dim = 0;
  int64_t num_heads = 1;
  double dropout = 0;
  bool bias = true;
  bool batch_first = false;
  Generator* generator = nullptr;
  operator MultiHeadAttentionOptions() const {  // NOLINT(google-explicit-constructor): it stands in for it
    return {.num_hiddens = embed_dim,
            .num_heads = num_heads,
            .dropout = dropout,
            .bias = bias,
            .batch_first = batch_first,
            .names = ParameterNames::PyTorch,
            .generator = generator};
  }
};
// PyTorch's spelling of the class name: MultiHeadAttention with PyTorch's names is the same layer.
class [[deprecated(
    "use nn::MultiHeadAttention with .names = nn::ParameterNames::PyTorch")]] MultiheadAttention
    : public MultiHeadAttention{
      public : explicit MultiheadAttention(const MultiheadAttentionOptions& options) :
          MultiHeadAttention(options){}
    };
#pragma GCC diagnostic pop

// Sets the kernel of every DotProductAttention in `module` and its descendants (to compare the fused
// kernel with the composed reference on a whole model).
void set_attention_kernel(Module& module, AttentionKernel kernel);

}  // namespace minigrad::nn

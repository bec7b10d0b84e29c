// Embedding: a table of num_embeddings vectors of size embedding_dim, looked up by int64 token ids.
// Initialised N(0, 1) as PyTorch; the padding row (if any) starts at zero and never gets a gradient,
// so it stays zero.
//
//   Embedding embed(10000, 64, /*padding_idx=*/0);
//   Variable x = embed(ids);   // ids (B, T) int64 -> (B, T, 64)
//
// With sparse = true, backward() gives the table a row-sparse gradient, the rows the batch looked up
// (weight.grad().is_row_sparse(); tensor/row_sparse.h), for optim::SparseAdam or SGD without momentum:
//
//   Embedding table({.num_embeddings = 65536, .embedding_dim = 64, .sparse = true});
#pragma once

#include "minigrad/nn/module.h"

namespace minigrad::nn {

struct EmbeddingOptions {
  int64_t num_embeddings = 0;
  int64_t embedding_dim = 0;
  int64_t padding_idx = -1;  // none
  // The weight's gradient is row-sparse (PyTorch's sparse=True): see above.
  bool sparse = false;
  // Where the initial weights are drawn from; nullptr: this thread's default generator. Not owned.
  Generator* generator = nullptr;
};

class Embedding : public Layer<Embedding> {
 public:
  explicit Embedding(const EmbeddingOptions& options);
  Embedding(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx = -1,
            Generator* generator = nullptr)
      : Embedding(EmbeddingOptions{.num_embeddings = num_embeddings,
                                   .embedding_dim = embedding_dim,
                                   .padding_idx = padding_idx,
                                   .generator = generator}) {}
  // Any other arguments: a compile error naming these (nn/constructor_lines.h).
  template <typename... A>
  requires NoConstructorTakes<
      Embedding,
      ConstructorLines<void(const EmbeddingOptions&), void(int64_t, int64_t), void(int64_t, int64_t, int64_t),
                       void(int64_t, int64_t, int64_t, Generator*)>,
      A...>
  explicit Embedding(A&&...) : Embedding(EmbeddingOptions{}) {
    static_assert(wrong_arguments<A...>,
                  "nn::Embedding takes (num_embeddings, embedding_dim), then padding_idx and a Generator*; "
                  "or (EmbeddingOptions)");
  }

  // ids: any shape, int64 -> ids.shape + (embedding_dim)
  Variable forward(const Tensor& ids) const;

  std::string name() const override { return "Embedding"; }
  std::string extra_repr() const override;

  Variable weight;  // (num_embeddings, embedding_dim)
  EmbeddingOptions options;
};

}  // namespace minigrad::nn

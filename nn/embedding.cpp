#include "minigrad/nn/embedding.h"

#include "minigrad/autograd/functions.h"

namespace minigrad::nn {

Embedding::Embedding(const EmbeddingOptions& opts) : options(opts) {
  if (opts.num_embeddings <= 0 || opts.embedding_dim <= 0) {
    throw ValueError("Embedding", "num_embeddings and embedding_dim must be positive");
  }
  if (opts.padding_idx < -1 || opts.padding_idx >= opts.num_embeddings) {
    throw ValueError("Embedding", "padding_idx " + std::to_string(opts.padding_idx) +
                                      " is outside the table of " + std::to_string(opts.num_embeddings) +
                                      " rows");
  }
  Tensor table =
      Tensor::normal({opts.num_embeddings, opts.embedding_dim}, 0, 1, DType::Float32, opts.generator);
  if (opts.padding_idx >= 0) table.select(0, opts.padding_idx).zero_();
  weight = register_parameter("weight", table);
}

Variable Embedding::forward(const Tensor& ids) const {
  return embedding(weight, ids, {.padding_idx = options.padding_idx, .sparse = options.sparse});
}

std::string Embedding::extra_repr() const {
  std::string s = std::to_string(options.num_embeddings) + ", " + std::to_string(options.embedding_dim);
  if (options.padding_idx >= 0) s += ", padding_idx=" + std::to_string(options.padding_idx);
  if (options.sparse) s += ", sparse=True";
  return s;
}

}  // namespace minigrad::nn

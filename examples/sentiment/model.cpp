#include "examples/sentiment/model.h"

#include <cmath>

namespace sentiment {

using namespace minigrad;

SentimentModel::SentimentModel(const Config& c, int64_t vocab_size, NgramVocabulary ngram_vocabulary,
                               NbFeatures nb_features)
    : ngram_max_(c.ngram_max),
      nb_max_(c.nb_max),
      hashed_ngrams_(!c.ngram_vocabulary),
      ngram_vocabulary_(c.ngram_vocabulary ? std::move(ngram_vocabulary) : NgramVocabulary{}) {
  if (c.ngram_buckets > 0 && static_cast<int64_t>(ngram_vocabulary_.ngrams().size()) >= c.ngram_buckets) {
    throw ValueError("SentimentModel", std::to_string(ngram_vocabulary_.ngrams().size()) +
                                           " n-grams do not fit a table of " +
                                           std::to_string(c.ngram_buckets) + " rows (row 0 is nobody's)");
  }
  encoder = register_module("encoder", std::make_shared<nn::TransformerEncoder>(nn::TransformerEncoderOptions{
                                           .layer = {.num_hiddens = c.num_hiddens,
                                                     .ffn_num_hiddens = c.ffn_num_hiddens,
                                                     .num_heads = c.num_heads,
                                                     .dropout = c.dropout,
                                                     .attention_dropout = c.attention_dropout},
                                           .num_layers = c.num_layers,
                                           .vocab_size = vocab_size,
                                           .max_len = c.max_len,
                                           .learnable_positions = c.learnable_positions,
                                           .padding_idx = Vocabulary::kPad}));
  if (c.embedding_std != 1.0) {  // re-draw the table at the configured scale, keeping the padding row at 0
    const Tensor& table = encoder->embedding->weight.data();
    table.copy_(Tensor::normal(table.shape(), 0, c.embedding_std));
    table.select(0, Vocabulary::kPad).zero_();
  }
  encoder->embedding->options.sparse = c.sparse_embeddings;
  if (c.ngram_buckets > 0) {
    ngrams = register_module(
        "ngrams", std::make_shared<nn::Embedding>(nn::EmbeddingOptions{.num_embeddings = c.ngram_buckets,
                                                                       .embedding_dim = c.num_hiddens,
                                                                       .padding_idx = 0,
                                                                       .sparse = c.sparse_embeddings}));
    const Tensor& table = ngrams->weight.data();
    table.copy_(Tensor::normal(table.shape(), 0, c.embedding_std));
    table.select(0, 0).zero_();
  }
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(c.dropout));
  head = register_module("head", std::make_shared<nn::Linear>(2 * c.num_hiddens, 2));
  if (c.nb_max > 0) {
    // Always row-sparse: a review has a few hundred of its million rows.
    nb = register_module(
        "nb", std::make_shared<nn::Embedding>(nn::EmbeddingOptions{
                  .num_embeddings = c.nb_rows, .embedding_dim = 2, .padding_idx = 0, .sparse = true}));
    nb->weight.data().zero_();  // the branch starts silent: the logits are the encoder's
    const bool given = !nb_features.empty();
    if (given && (nb_features.keys().numel() != c.nb_rows || nb_features.max_n() != c.nb_max))
      throw ValueError("SentimentModel", "the NB features do not have nb_rows rows of n-grams up to nb_max");
    nb_keys_ =
        register_buffer("nb_keys", given ? nb_features.keys() : Tensor::zeros({c.nb_rows}, DType::Int64));
    nb_ratios_ = register_buffer("nb_ratios",
                                 given ? nb_features.ratios() : Tensor::zeros({c.nb_rows}, DType::Float32));
    nb_features_ = std::move(nb_features);
  }
}

void SentimentModel::read_nb_features() {
  if (nb) nb_features_ = NbFeatures(nb_keys_.data().clone(), nb_ratios_.data().clone(), nb_max_);
}

Variable SentimentModel::encode(const Tensor& tokens, const Tensor& lengths) const {
  Variable x = encoder->embed(tokens);  // (B, T, d), scaled by √d
  if (ngrams) {
    const Tensor rows = hashed_ngrams_
                            ? ngram_rows(tokens, lengths, ngrams->options.num_embeddings, ngram_max_)
                            : ngram_vocabulary_.rows(tokens, lengths, ngram_max_);
    // Each position's n-gram vectors, summed (B, T, n-1, d) -> (B, T, d), at the token embedding's scale.
    x = x + sum((*ngrams)(rows), {2}) * std::sqrt(static_cast<double>(encoder->options.layer.num_hiddens));
  }
  return encoder->encode(x, {.valid_lens = lengths});  // (B, T, d)
}

Variable SentimentModel::forward(const Tensor& tokens, const Tensor& lengths, const Tensor& nb_rows,
                                 const Tensor& nb_ratios) const {
  const Variable h = encode(tokens, lengths);  // (B, T, d)
  // Mean pooling sees the whole review; max pooling lets one strong phrase ("waste of time") speak.
  const Variable pooled =
      concat({mean_over_time(h, lengths, /*dim=*/1), max_over_time(h, lengths, /*dim=*/1)}, 1);  // (B, 2d)
  const Variable logits = (*head)((*dropout)(pooled));                                           // (B, 2)
  if (!nb) return logits;
  if (!nb_rows.defined() || nb_rows.rank() != 2 || nb_rows.dtype() != DType::Int64 ||
      nb_ratios.shape() != nb_rows.shape() || nb_rows.shape()[0] != tokens.shape()[0]) {
    throw ShapeError("SentimentModel",
                     "the NB branch expects nb_rows (B, K) int64 and nb_ratios (B, K) for " +
                         std::to_string(tokens.shape()[0]) + " reviews, got nb_rows " +
                         (nb_rows.defined() ? nb_rows.shape().str() : "none") + " and nb_ratios " +
                         (nb_ratios.defined() ? nb_ratios.shape().str() : "none"));
  }
  // Σ_f r_f · W[f] over each review's n-grams: (B, K, 2) · (B, K, 1) summed over K -> (B, 2).
  const Variable r(reshape(nb_ratios.to(nb->weight.dtype()), {nb_rows.shape()[0], nb_rows.shape()[1], 1}));
  return logits + sum((*nb)(nb_rows)*r, {1});
}

}  // namespace sentiment

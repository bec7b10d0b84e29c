// The sentiment classifier: a Transformer encoder over the review's tokens, pooled over the valid
// positions, and a linear head over two classes (negative, positive).
//
//   tokens (B, T) -> (Embedding + n-gram embeddings)·√d + PositionalEncoding -> N encoder layers
//   -> masked mean and max pooling -> dropout -> Linear -> logits (B, 2)
//   + the NB branch's logits (B, 2): Σ over the review's 1- to 3-grams f of r_f · W[f] (nb_features.h)
//
// (n-grams: ngrams.h; the configuration: config.h).
#pragma once

#include <memory>
#include <string>

#include "examples/sentiment/config.h"
#include "examples/sentiment/nb_features.h"
#include "examples/sentiment/ngrams.h"
#include "minigrad/minigrad.h"

namespace sentiment {

class SentimentModel : public minigrad::nn::Layer<SentimentModel> {
 public:
  // `ngram_vocabulary` is the list of n-grams with rows when config.ngram_vocabulary is set (unused
  // otherwise).
  // `nb_features` are the NB branch's n-grams and ratios when config.nb_max > 0; empty, the branch's
  // buffers start at zero for a checkpoint's weights to fill (then call read_nb_features()).
  SentimentModel(const Config& config, int64_t vocab_size, NgramVocabulary ngram_vocabulary = {},
                 NbFeatures nb_features = {});

  // tokens (B, T) int64, lengths (B) int64 -> logits (B, 2). With the NB branch, also nb_rows (B, K)
  // int64, the rows of each review's n-grams (padded with 0), and nb_ratios (B, K), their r.
  minigrad::Variable forward(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths,
                             const minigrad::Tensor& nb_rows = {},
                             const minigrad::Tensor& nb_ratios = {}) const;
  // The encoder's output at every position, before pooling: (B, T, d). Masked-token pretraining
  // predicts tokens from it; forward pools it.
  minigrad::Variable encode(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths) const;

  std::string name() const override { return "SentimentModel"; }

  std::shared_ptr<minigrad::nn::TransformerEncoder> encoder;
  std::shared_ptr<minigrad::nn::Embedding> ngrams;  // nullptr without n-grams
  std::shared_ptr<minigrad::nn::Dropout> dropout;
  std::shared_ptr<minigrad::nn::Linear> head;
  std::shared_ptr<minigrad::nn::Embedding> nb;  // (nb_rows, 2), zero at first; nullptr without the branch
  // The NB branch's n-grams and ratios, nullptr without it.
  const NbFeatures* nb_features() const { return nb ? &nb_features_ : nullptr; }
  // Rebuilds them from the buffers nb_keys and nb_ratios, after a checkpoint's weights were loaded.
  void read_nb_features();
  // Which n-grams own rows of `ngrams`, with config.ngram_vocabulary; empty when they are hashed.
  const NgramVocabulary& ngram_vocabulary() const { return ngram_vocabulary_; }

 private:
  int64_t ngram_max_;
  int64_t nb_max_;
  bool hashed_ngrams_;
  NgramVocabulary ngram_vocabulary_;
  NbFeatures nb_features_;
  minigrad::Variable nb_keys_, nb_ratios_;  // buffers: saved with the weights
};

}  // namespace sentiment

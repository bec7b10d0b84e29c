// The sentiment classifier: a Transformer encoder over the review's tokens, pooled over the valid
// positions, and a linear head over two classes (negative, positive).
//
//   tokens (B, T) -> Embedding·√d (+ token features) + PositionalEncoding -> N encoder layers
//   -> masked mean and max pooling -> dropout -> Linear -> logits (B, 2) (+ review logits)
//
// The two bracketed terms are extension points, empty here: modules of their own that extras/ fills (the
// n-gram table and the Naive Bayes branch, extras/extended_model.h) for the last points of accuracy.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "examples/sentiment/batches.h"
#include "examples/sentiment/config.h"
#include "minigrad/minigrad.h"

namespace sentiment {

// Token features: vectors added to the token embeddings (at their √d scale) before the encoder.
class TokenFeatures : public minigrad::nn::Layer<TokenFeatures> {
 public:
  // tokens (B, T) int64, lengths (B) int64 -> (B, T, d)
  virtual minigrad::Variable forward(const minigrad::Tensor& tokens,
                                     const minigrad::Tensor& lengths) const = 0;
  // The options that shape its tensors, as text appended to the model's architecture(): " max_n=2".
  virtual std::string architecture() const = 0;
  // Files and metadata it keeps in a checkpoint folder beside the weights (none by default).
  virtual void save_beside(const Vocabulary&, std::map<std::string, std::string>& /*metadata*/,
                           std::vector<minigrad::FolderFile>& /*files*/) const {}
};

// Review logits: (B, 2) added to the head's, read from each review's bag of features (batches.h).
class ReviewLogits : public minigrad::nn::Layer<ReviewLogits> {
 public:
  // batch.bag_rows and bag_weights (B, K) -> (B, 2)
  virtual minigrad::Variable forward(const Batch& batch) const = 0;
  // A review's bag, from all its tokens: what encode() stores in each Example.
  virtual FeatureBag bag(const std::vector<std::string>& tokens) const = 0;
  // The options that shape its tensors, as TokenFeatures::architecture.
  virtual std::string architecture() const = 0;
  // Called once a checkpoint's weights are loaded, to rebuild what is computed from its buffers.
  virtual void weights_loaded() {}
  // The learning rate of its parameters, as a multiple of the rest's.
  virtual double lr_scale() const { return 1; }
};

// How to make each extension, or nothing. The model calls them in its constructor, each where its
// module sits in the model (after the encoder; after the head), so that the parameters are drawn from the
// generator in the model's order.
struct Extensions {
  std::function<std::shared_ptr<TokenFeatures>()> token_features{};
  std::function<std::shared_ptr<ReviewLogits>()> review_logits{};
};

class SentimentModel : public minigrad::nn::Layer<SentimentModel> {
 public:
  SentimentModel(const Config& config, int64_t vocab_size, const Extensions& extensions = {});

  // batch.tokens (B, T) int64, batch.lengths (B) int64 (and, with review logits, the bags) -> logits (B, 2)
  minigrad::Variable forward(const Batch& batch) const;
  // The encoder's output at every position, before pooling: (B, T, d). Masked-token pretraining
  // predicts tokens from it; forward pools it.
  minigrad::Variable encode(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths) const;
  // What encode() (batches.h) needs to fill each Example's bag for the review logits; empty without them.
  Featurizer featurizer() const;

  // The options that shape its tensors, as text (the config's, then its extensions'): two checkpoints
  // load into each other's models exactly when these agree.
  const std::string& architecture() const { return architecture_; }
  std::string name() const override { return "SentimentModel"; }

  std::shared_ptr<minigrad::nn::TransformerEncoder> encoder;
  std::shared_ptr<TokenFeatures> token_features;  // nullptr without
  std::shared_ptr<minigrad::nn::Dropout> dropout;
  std::shared_ptr<minigrad::nn::Linear> head;
  std::shared_ptr<ReviewLogits> review_logits;  // nullptr without

 private:
  std::string architecture_;
};

}  // namespace sentiment

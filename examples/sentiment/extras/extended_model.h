// The main job's model: the classifier of model.h with both extension points filled.
//
//   token features: an n-gram table (fastText's, extras/ngrams.h): each bigram (and trigram) ending at a
//     position adds its row's vector to that token's embedding;
//   review logits: the NB branch (Wang and Manning's NB-weighted bag of n-grams, extras/nb_features.h):
//     Σ over the review's 1- to 3-grams f of r_f · W[f], added to the head's logits.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "examples/sentiment/checkpoint.h"
#include "examples/sentiment/extras/extended_config.h"
#include "examples/sentiment/extras/nb_features.h"
#include "examples/sentiment/extras/ngrams.h"
#include "examples/sentiment/model.h"

namespace sentiment {

// ngram_buckets rows of config.num_hiddens (row 0, padding and "no row", stays zero), drawn at the token
// embedding's scale; the rows go to the n-grams of `vocabulary` (with ngram_vocabulary), or to every
// n-gram hashed (fastText's way). Row-sparse with sparse_embeddings.
class NgramTable : public TokenFeatures {
 public:
  NgramTable(const Config& config, const ExtendedConfig& extended, NgramVocabulary vocabulary);
  // tokens (B, T), lengths (B) -> each position's n-gram vectors summed, times √d: (B, T, d)
  minigrad::Variable forward(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths) const override;
  // " ngram_buckets=65536 ngram_max=2 ngram_vocabulary=1" (the last without it: the same table read two
  // ways, for a hashed model's weights mean nothing to a model with a vocabulary).
  std::string architecture() const override;
  // ngrams.json (the n-grams with rows, as text) and its fingerprint in the model file's metadata.
  void save_beside(const Vocabulary& vocabulary, std::map<std::string, std::string>& metadata,
                   std::vector<minigrad::FolderFile>& files) const override;
  std::string name() const override { return "NgramTable"; }
  // Which n-grams own rows, with ngram_vocabulary; empty when they are hashed.
  const NgramVocabulary& vocabulary() const { return vocabulary_; }

  std::shared_ptr<minigrad::nn::Embedding> table;

 private:
  int64_t max_n_;
  bool hashed_;
  double scale_;  // √d, the token embedding's
  NgramVocabulary vocabulary_;
};

// nb_rows rows of 2 logits, zero at first (the branch starts silent: the logits are the
// encoder's), row-sparse, and the n-grams' keys and ratios as buffers, saved with the weights.
class NbBranch : public ReviewLogits {
 public:
  // Without features, the buffers start at zero for a checkpoint's weights to fill (weights_loaded()).
  NbBranch(const Config& config, const ExtendedConfig& extended, NbFeatures features);
  // batch.bag_rows and bag_weights (B, K): Σ_f r_f · W[f] over each review's n-grams -> (B, 2)
  minigrad::Variable forward(const Batch& batch) const override;
  FeatureBag bag(const std::vector<std::string>& tokens) const override { return features_.present(tokens); }
  std::string architecture() const override;  // " nb_max=3 nb_rows=1048576"
  // Rebuilds the n-grams and ratios from the buffers keys and ratios.
  void weights_loaded() override;
  double lr_scale() const override { return lr_scale_; }  // nb_lr over lr
  std::string name() const override { return "NbBranch"; }
  const NbFeatures& features() const { return features_; }

  std::shared_ptr<minigrad::nn::Embedding> table;

 private:
  int64_t max_n_;
  double lr_scale_;
  NbFeatures features_;
  minigrad::Variable keys_, ratios_;  // buffers
};

// The model a configuration asks for, with the n-gram table and the NB branch where its extensions'
// options (extended_config.h) have them, and its token table row-sparse with sparse_embeddings.
std::shared_ptr<SentimentModel> make_extended_model(const Config& config, int64_t vocab_size,
                                                    NgramVocabulary ngrams = {}, NbFeatures nb = {});
// The same for Checkpoint::load: reads ngrams.json beside the weights and checks it is theirs.
std::shared_ptr<SentimentModel> build_extended_model(const Config& config, const Vocabulary& vocabulary,
                                                     const std::filesystem::path& dir,
                                                     const minigrad::SafetensorsFile& weights);
// A checkpoint of the main job's: Checkpoint::load with build_extended_model.
Checkpoint load_extended_checkpoint(const std::filesystem::path& dir);

// The model's n-gram table and NB branch, or nullptr.
const NgramTable* ngram_table(const SentimentModel& model);
const NbBranch* nb_branch(const SentimentModel& model);

}  // namespace sentiment

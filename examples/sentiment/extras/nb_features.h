// Naive Bayes-weighted n-gram features (Wang and Manning, 2012): the sentiment model's optional linear
// branch over a review's bag of n-grams, Johnson and Zhang's (2015) "bown" beside the Transformer.
//
// Each n-gram f (n = 1 .. max_n words) present in a review counts once (binarised), weighted by its log-count
// ratio, from the training reviews alone:
//   p = α + (reviews with f among the positive ones),  q = α + (... among the negative ones),   α = 1
//   r_f = log((p / ‖p‖₁) / (q / ‖q‖₁))       (‖p‖₁ sums p over every kept n-gram)
// r_f > 0 for an n-gram more common in positive reviews. The model then learns a weight per n-gram and
// class on top, so a review's branch logits are Σ_f r_f · W[f] over its n-grams: NB-weighted logistic
// regression, trained jointly with the encoder.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "examples/sentiment/batches.h"
#include "minigrad/minigrad.h"

namespace sentiment {

class NbFeatures {
 public:
  // Counts the n-grams (1 .. max_n words) of the tokenized training reviews; gives rows 1 .. rows - 1 to
  // the n-grams in the most reviews, each in at least min_reviews of them (ties in the order of their
  // keys, so the same data gives the same rows), and computes their r. Row 0 is padding (r = 0).
  static NbFeatures build(const std::vector<std::vector<std::string>>& reviews,
                          const std::vector<int64_t>& labels, int64_t max_n, int64_t rows,
                          int64_t min_reviews);
  NbFeatures() = default;
  // From saved tensors: keys (rows) int64, each n-gram's key (key() below; 0 for an unused row), and
  // ratios (rows) float32, its r. Throws if they do not fit together or a key repeats.
  NbFeatures(minigrad::Tensor keys, minigrad::Tensor ratios, int64_t max_n);

  // The key of the n-gram tokens[begin, begin + n): a 64-bit hash of its words (FNV-1a, fixed here, so a
  // saved model reads the same rows on any machine). Never 0.
  static uint64_t key(const std::vector<std::string>& tokens, size_t begin, size_t n);

  // The rows of the n-grams present in a review (each once, sorted), weighted by their r.
  FeatureBag present(const std::vector<std::string>& tokens) const;

  bool empty() const { return row_of_.empty(); }
  int64_t max_n() const { return max_n_; }
  int64_t kept() const { return static_cast<int64_t>(row_of_.size()); }  // n-grams with a row
  const minigrad::Tensor& keys() const { return keys_; }
  const minigrad::Tensor& ratios() const { return ratios_; }

 private:
  std::unordered_map<uint64_t, int64_t> row_of_;
  minigrad::Tensor keys_, ratios_;
  std::vector<float> ratio_of_row_;  // ratios_, as float32, for present()
  int64_t max_n_ = 0;
};

}  // namespace sentiment

// Reviews into examples and batches: the hold-out split, encoding token ids, padded batches, token
// dropout, and the order batches come in for training and evaluation.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "examples/sentiment/text.h"
#include "minigrad/minigrad.h"

namespace sentiment {

struct Split {
  std::vector<Review> training, validation;
  // Training reviews left out because their text is, character for character, that of a held-out one.
  int64_t duplicates_removed = 0;
};
// Holds `count` reviews out of `reviews` for validation: count/2 negatives and the rest positives, drawn
// with a generator seeded by `seed` (the same reviews for any training seed), in blocks of `block`
// consecutive file numbers (Review::number; the given order where there are none), since aclImdb numbers
// a label's reviews roughly film by film: held out one by one, validation ran 1.8 points above test
// (docs/sentiment.md, "The validation split"). The others, in their order, are for training, less any
// whose text is also held out. Throws if a label has too few reviews to hold that many out.
Split hold_out(const std::vector<Review>& reviews, int64_t count, uint64_t seed, int64_t block = 100);

// A review's features as a weighted bag, for a model extension that reads one (ReviewLogits, model.h):
// rows of a table and a weight for each. The NB branch's (extras/nb_branch.h) are the review's n-grams and
// their log-count ratios.
struct FeatureBag {
  std::vector<int64_t> rows;
  std::vector<float> weights;
};
// A review's tokens (all of them, before truncation) -> its bag.
using Featurizer = std::function<FeatureBag(const std::vector<std::string>& tokens)>;

struct Example {
  std::vector<int64_t> ids;  // at most max_len token ids
  int64_t label = 0;
  FeatureBag bag{};  // with a featurizer; empty without
};

// Token ids for each review. A review longer than max_len keeps its first max_len/2 and last
// max_len - max_len/2 tokens: the opening and the verdict at the end carry most of the sentiment (Sun et
// al., 2019, found head+tail truncation best for long reviews). An empty review becomes one <unk>.
// With a `featurizer` (a model's, SentimentModel::featurizer()), also each review's bag of features.
std::vector<Example> encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary, int64_t max_len,
                            const Featurizer& featurizer = {});

struct Batch {
  minigrad::Tensor tokens;   // (B, T) int64, padded with <pad> to the longest review, rounded up to 16
                             // (or to max_len if that is less)
  minigrad::Tensor lengths;  // (B) int64: each review's valid length
  minigrad::Tensor labels;   // (B) int64
  int64_t token_count = 0;   // real (unpadded) tokens
  // The examples' bags: (B, K) int64 rows and float32 weights, K the largest bag in the batch, padded with
  // row 0 and weight 0; (B, 1) of zeros when the examples have none.
  minigrad::Tensor bag_rows{}, bag_weights{};
};

// Throws a ShapeError from `op` unless tokens is int64 (B, T) and lengths int64 (B): what every function
// on a batch of token ids takes.
void check_tokens(const std::string& op, const minigrad::Tensor& tokens, const minigrad::Tensor& lengths);

// The length a batch whose longest review has `longest` tokens is padded to: rounded up to a multiple
// of 16, but never past max_len.
int64_t padded_length(int64_t longest, int64_t max_len);

// Examples must have at most max_len tokens; the padded length never exceeds max_len.
Batch make_batch(const std::vector<Example>& examples, const std::vector<size_t>& indices, int64_t max_len);

// One epoch's batches: shuffled with the generator, then grouped so that each batch holds reviews of
// similar length (sorted within windows of 50 batches; the batches are shuffled again afterwards).
// Padding a short review to a long one's length wastes compute, and attention's cost grows with the
// square of the length.
std::vector<std::vector<size_t>> training_batches(const std::vector<Example>& examples, int64_t batch_size,
                                                  minigrad::Generator& generator);
// All examples, longest first, in batches of at most `batch_size` reviews and, past one review, at most
// kEvaluationTokens tokens (the longest review's length times the batch's size): for evaluation, where
// order does not matter.
inline constexpr int64_t kEvaluationTokens = 8192;
std::vector<std::vector<size_t>> evaluation_batches(const std::vector<Example>& examples, int64_t batch_size);

}  // namespace sentiment

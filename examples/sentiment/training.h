// Turning reviews into batches, training the classifier, and measuring it.
#pragma once

#include <iosfwd>
#include <vector>

#include "examples/sentiment/model.h"

namespace sentiment {

struct Example {
  std::vector<int64_t> ids;  // at most max_len token ids
  int64_t label = 0;
};

// Token ids for each review. A review longer than max_len keeps its first max_len/2 and last
// max_len - max_len/2 tokens: the opening and the verdict at the end carry most of the sentiment (Sun et
// al., 2019, found head+tail truncation best for long reviews). An empty review becomes one <unk>.
std::vector<Example> encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary,
                            int64_t max_len);

struct Batch {
  minigrad::Tensor tokens;   // (B, T) int64, padded with <pad> to the longest review, rounded up to 16
  minigrad::Tensor lengths;  // (B) int64: each review's valid length
  minigrad::Tensor labels;   // (B) int64
  int64_t token_count = 0;   // real (unpadded) tokens
};

Batch make_batch(const std::vector<Example>& examples, const std::vector<size_t>& indices);

// One epoch's batches: shuffled with the generator, then grouped so that each batch holds reviews of
// similar length (sorted within windows of 50 batches; the batches are shuffled again afterwards).
// Padding a short review to a long one's length wastes compute, and attention's cost grows with the
// square of the length.
std::vector<std::vector<size_t>> training_batches(const std::vector<Example>& examples, int64_t batch_size,
                                                  minigrad::Generator& generator);
// All examples, longest first, in batches: for evaluation, where order does not matter.
std::vector<std::vector<size_t>> evaluation_batches(const std::vector<Example>& examples, int64_t batch_size);

struct Evaluation {
  int64_t count = 0;
  double accuracy = 0;
  double loss = 0;  // mean cross-entropy
  double seconds = 0;
};

// Accuracy and loss of the model (in eval mode, without recording a graph) on the examples.
Evaluation evaluate(SentimentModel& model, const std::vector<Example>& examples, int64_t batch_size = 64);

// P(positive) for each example, in order.
std::vector<double> positive_probabilities(SentimentModel& model, const std::vector<Example>& examples);

struct Prediction {
  double positive = 0;                      // P(positive)
  std::vector<std::string> tokens;          // the review as the model saw it (after truncation)
  std::vector<minigrad::Tensor> attention;  // per layer: (heads, tokens, tokens), queries by keys
};

// Reads one review with the checkpoint's model and keeps its attention weights.
Prediction predict(const Checkpoint& checkpoint, const std::string& text);

struct TrainingLog {
  double seconds = 0;
  std::vector<double> epoch_loss;      // mean training loss of each epoch
  std::vector<double> epoch_accuracy;  // training accuracy of each epoch
};

// Trains the checkpoint's model with AdamW, linear warm-up and cosine decay, gradient clipping and
// dropout, as its config says. Progress goes to `out`: a live bar when `interactive`, otherwise a log line
// every few seconds. max_steps > 0 stops early (for smoke tests).
TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  bool interactive, int64_t max_steps = 0);

}  // namespace sentiment

// Turning reviews into batches, training the classifier, and measuring it.
#pragma once

#include <functional>
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
                             // (or to max_len if that is less)
  minigrad::Tensor lengths;  // (B) int64: each review's valid length
  minigrad::Tensor labels;   // (B) int64
  int64_t token_count = 0;   // real (unpadded) tokens
};

// Examples must have at most max_len tokens; the padded length never exceeds max_len.
Batch make_batch(const std::vector<Example>& examples, const std::vector<size_t>& indices, int64_t max_len);

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

struct TrainOptions {
  bool interactive = false;      // a live progress bar, instead of a log line every few seconds
  int64_t max_steps = 0;         // > 0: stop after this many steps (smoke tests)
  int64_t checkpoint_every = 0;  // > 0: call `save` after every this many steps
  std::function<void(int64_t step)> save{};
};

// Trains the checkpoint's model with AdamW, linear warm-up and cosine decay, gradient clipping and
// dropout, as its config says. Progress goes to `out`. Throws, naming the step, if the loss or the
// gradient norm is not finite (before that step changes any weight), or if there are no examples.
TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  const TrainOptions& options = {});

}  // namespace sentiment

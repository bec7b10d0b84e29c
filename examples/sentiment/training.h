// Turning reviews into batches, training the classifier, and measuring it.
#pragma once

#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "examples/sentiment/model.h"

namespace sentiment {

struct Split {
  std::vector<Review> training, validation;
};
// Holds `count` reviews out of `reviews` for validation: count/2 negatives and the rest positives, drawn
// with a generator seeded by `seed` (the same reviews for any training seed); the others, in their
// order, are for training. Throws if a label has too few reviews to hold that many out.
//
// Reviews are held out in blocks of `block` consecutive file numbers (Review::number; the given order
// where there are none), not one by one. aclImdb numbers reviews film by film and its test split has
// other films than its training split; one by one, a validation review's film would almost always have
// other reviews in training (its actors, its title, its plot), and validation accuracy ran 1.8 points
// above test accuracy. In blocks, only the films at a block's two ends are shared.
Split hold_out(const std::vector<Review>& reviews, int64_t count, uint64_t seed, int64_t block = 100);

struct Example {
  std::vector<int64_t> ids;  // at most max_len token ids
  int64_t label = 0;
  // With the NB branch: the rows of the review's n-grams (of the whole review, not truncated) and their
  // r (NbFeatures::present); empty without it.
  std::vector<int64_t> nb_rows{};
  std::vector<float> nb_ratios{};
};

// Token ids for each review. A review longer than max_len keeps its first max_len/2 and last
// max_len - max_len/2 tokens: the opening and the verdict at the end carry most of the sentiment (Sun et
// al., 2019, found head+tail truncation best for long reviews). An empty review becomes one <unk>.
// With `nb` (a model's nb_features()), also each review's n-grams for the NB branch.
std::vector<Example> encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary, int64_t max_len,
                            const NbFeatures* nb = nullptr);

// The n-grams that get rows of their own when config.ngram_vocabulary is set, counted in the training
// examples alone (as the words are, after truncation); empty when the model hashes its n-grams or has none.
NgramVocabulary build_ngram_vocabulary(const Config& config, const std::vector<Example>& examples);

struct Batch {
  minigrad::Tensor tokens;   // (B, T) int64, padded with <pad> to the longest review, rounded up to 16
                             // (or to max_len if that is less)
  minigrad::Tensor lengths;  // (B) int64: each review's valid length
  minigrad::Tensor labels;   // (B) int64
  int64_t token_count = 0;   // real (unpadded) tokens
  // The NB branch's inputs: (B, K) int64 rows and float32 ratios, K the most n-grams of a review in the
  // batch, padded with row 0 and r 0 (for the model's forward); (B, 1) of zeros when the examples have none.
  minigrad::Tensor nb_rows{}, nb_ratios{};
};

// The length a batch whose longest review has `longest` tokens is padded to: rounded up to a multiple
// of 16, but never past max_len.
int64_t padded_length(int64_t longest, int64_t max_len);

// Examples must have at most max_len tokens; the padded length never exceeds max_len.
Batch make_batch(const std::vector<Example>& examples, const std::vector<size_t>& indices, int64_t max_len);

// Token dropout: each valid token of the batch (not the padding) becomes <unk> with probability p, drawn
// from `generator`. Returns new tokens; the batch's are left as they are.
minigrad::Tensor drop_tokens(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths, double p,
                             minigrad::Generator& generator);

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

// What training and evaluation need from the other processes of a data-parallel run (distributed/); the
// default is a world of one, and then none of the functions is called.
struct Ranks {
  int rank = 0;
  int world = 1;
  // Replaces each parameter's gradient by its mean over the ranks.
  std::function<void(const std::vector<minigrad::Variable>&)> average_gradients{};
  // Sums the values over the ranks, in place.
  std::function<void(std::span<double>)> sum{};
  // Every rank's `state`, in rank order, on every rank.
  std::function<std::vector<minigrad::Generator::State>(const minigrad::Generator::State&)> gather{};

  // This rank's contiguous share [begin, end) of `count` items (distributed::shard's split).
  std::pair<int64_t, int64_t> share(int64_t count) const;
  // This rank's contiguous share [begin, end) of a batch of reviews `lengths` tokens long: balanced_cuts'.
  std::pair<int64_t, int64_t> share(std::span<const int64_t> lengths,
                                    const std::function<int64_t(int64_t longest)>& review_cost) const;
};

// The multiply-adds of the encoder's matrix products, forward, for one review of a batch whose longest
// review has `longest` tokens, so that it is padded to T = padded_length(longest, config.max_len): per
// layer and token, the attention projections and the feed-forward network (4d² + 2d·FFN) and attention's
// scores and weighted sums (2d·T). The backward pass costs about twice that, in the same proportions, so
// it also weighs whole steps against each other.
int64_t review_cost(const Config& config, int64_t longest);

// Cuts a batch of reviews lengths[i] tokens long into `world` contiguous shares [cuts[r], cuts[r + 1])
// so that the costliest share costs as little as possible. Every review in a share is padded to the
// share's longest, so a share costs its size × review_cost(its longest review's length), which must be
// positive and grow with the length. Equal halves of a batch sorted by length can differ by a whole
// padding step of 16 tokens; then the rank with the longer reviews should take fewer of them. Every
// share holds a review if there are enough of them.
std::vector<int64_t> balanced_cuts(std::span<const int64_t> lengths, int world,
                                   const std::function<int64_t(int64_t longest)>& review_cost);

struct Evaluation {
  int64_t count = 0;
  double accuracy = 0;
  double loss = 0;  // mean cross-entropy
  double seconds = 0;
};

// Accuracy and loss of the model (in eval mode, without recording a graph) on the examples; with several
// ranks, each evaluates its share and the counts are summed.
Evaluation evaluate(SentimentModel& model, const std::vector<Example>& examples, int64_t batch_size = 64,
                    const Ranks& ranks = {});

// P(positive) for each example, in order.
std::vector<double> positive_probabilities(SentimentModel& model, const std::vector<Example>& examples);
// The log-odds of positive, logit(positive) - logit(negative), for each example, in order.
std::vector<double> positive_log_odds(SentimentModel& model, const std::vector<Example>& examples);

// An ensemble of checkpoints (seeds of one configuration, say) reads each review with every member and
// averages their log-odds: P(positive) = σ(mean of the members' log-odds). Accuracy and mean
// cross-entropy of that on the reviews; one member gives that member's own figures.
Evaluation evaluate_ensemble(const std::vector<const Checkpoint*>& members,
                             const std::vector<Review>& reviews);
// The ensemble's mean log-odds for each review, in order.
std::vector<double> ensemble_log_odds(const std::vector<const Checkpoint*>& members,
                                      const std::vector<Review>& reviews);

struct Prediction {
  double positive = 0;                      // P(positive)
  std::vector<std::string> tokens;          // the review as the model saw it (after truncation)
  std::vector<minigrad::Tensor> attention;  // per layer: (heads, tokens, tokens), queries by keys
};

// Reads one review with the checkpoint's model and keeps its attention weights.
Prediction predict(const Checkpoint& checkpoint, const std::string& text);

struct TrainingLog {
  double seconds = 0;
  std::vector<double> epoch_loss;            // mean training loss of each epoch
  std::vector<double> epoch_accuracy;        // training accuracy of each epoch
  std::vector<Evaluation> epoch_validation;  // with options.validation: after each epoch run to its end
  int64_t first_epoch = 1;                   // the number of the epoch in epoch_loss[0] (> 1 when resumed)
  std::string final_state;                   // with checkpoint_every: the training state at the end
  int64_t steps = 0;                         // steps taken by this call
  double tokens = 0;                         // real (unpadded) tokens trained on, over all ranks
  // With several ranks: the time this rank waited at each step's end for the slowest rank to finish its
  // forward and backward (its time in the step's first collective, a sum of a few numbers).
  double waiting_seconds = 0;
};

struct TrainOptions {
  bool interactive = false;  // a live progress bar, instead of a log line every few seconds
  int64_t max_steps = 0;     // > 0: stop after this many steps (smoke tests)
  // > 0: call `save` after every this many steps and at the end of each epoch, with the bytes of the
  // training state (optim::serialize_training_state: the optimizer's moments, each rank's dropout
  // generator, the batch-order generator, the step and the position in the epoch). Called on every
  // rank; the caller writes the checkpoint on rank 0 only.
  int64_t checkpoint_every = 0;
  std::function<void(int64_t step, const std::string& training_state)> save{};
  // A training state to continue from (with the model's weights already loaded): the run then goes on
  // exactly as the interrupted one would have, given the same seed, rank count and thread count.
  const minigrad::SafetensorsFile* resume = nullptr;
  std::string resume_source{};  // names `resume` in errors
  Ranks ranks{};
  // Evaluated after each epoch (evaluate(), which draws no random numbers, so resuming stays exact).
  const std::vector<Example>* validation = nullptr;
};

// Masked-token pretraining (the masked language model of BERT, Devlin et al., 2019): positions chosen at
// random; the model reads the review with them hidden and predicts the token that was there.
struct MaskedTokens {
  minigrad::Tensor inputs;     // (B, T) int64: the tokens, with the chosen ones replaced
  minigrad::Tensor positions;  // (M) int64: the chosen positions, flattened (row·T + column)
  minigrad::Tensor targets;    // (M) int64: the tokens that were there
};
// Chooses each valid token (not the padding) with probability p, and one at random in a review that
// got none. A chosen token becomes <unk> (our mask token) 80% of the time, a random token other than
// <pad> and <unk> 10%, and stays 10%, as BERT: the model cannot tell which visible tokens it will be
// asked about.
MaskedTokens mask_tokens(const minigrad::Tensor& tokens, const minigrad::Tensor& lengths, double p,
                         int64_t vocab_size, minigrad::Generator& generator);

struct PretrainingLog {
  double seconds = 0;
  int64_t steps = 0;
  std::vector<double> epoch_loss;      // mean cross-entropy of the predicted tokens, per epoch
  std::vector<double> epoch_accuracy;  // share of them predicted right
};

// config.pretrain_epochs of masked-token pretraining of the checkpoint's model on the examples' text
// (their labels are not used): AdamW at config.pretrain_lr with warm-up and cosine decay, clipping,
// dropout. The predictions come from the encoder's output times the token embedding's table (tied
// weights, as BERT) plus a bias that is dropped afterwards, so the model keeps its shape. Uses
// options.interactive, max_steps and ranks; it keeps no checkpoints (--resume continues the
// classifier's training, which starts after it).
PretrainingLog pretrain(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                        const TrainOptions& options = {});

// Trains the checkpoint's model with AdamW, linear warm-up and cosine decay, gradient clipping and
// dropout, as its config says. With several ranks, each takes its share of every batch (from one batch
// order that all compute from the seed) and the gradients are averaged before the step. Progress goes
// to `out`. Throws, naming the step, if the loss or the gradient norm is not finite (before that step
// changes any weight), if there are no examples, or if a resumed state does not fit this run.
TrainingLog train(Checkpoint& checkpoint, const std::vector<Example>& examples, std::ostream& out,
                  const TrainOptions& options = {});

}  // namespace sentiment

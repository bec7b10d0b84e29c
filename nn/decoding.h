// Writing a sequence one token at a time with a trained decoder: greedy search, beam search, and sampling
// (temperature, top-k, top-p).
//
// The algorithms know nothing about Transformers. They talk to a StepModel, which takes the tokens chosen
// so far and returns the scores of the next one; two StepModels wrap a TransformerDecoder, with and without
// a key/value cache, and a test can hand-write one whose probabilities are known.
//
//   nn::CachedDecoderSteps steps(*model.decoder, memory, source_valid_lens);      // or UncachedDecoderSteps
//   nn::Generation g = nn::greedy(steps, start_tokens, {.max_new_tokens = 12, .end_token = kEnd});
//   Generator rng(7);
//   nn::Generation s = nn::sample(lm_steps, prompt, {.max_new_tokens = 50, .top_p = 0.9}, rng);
#pragma once

#include <vector>

#include "minigrad/nn/decoder.h"

namespace minigrad::nn {

// A model seen one step at a time: B rows (sequences) decoded side by side.
class StepModel {
 public:
  virtual ~StepModel() = default;
  // Appends tokens (B, n) int64 to every row and returns the logits of each row's next token: (B, V).
  virtual Tensor next_logits(const Tensor& tokens) = 0;
  // Keeps the rows `rows` (int64 (B')), in that order; a row may be repeated (beam search copies a
  // hypothesis it extends in two ways).
  virtual void select_rows(const Tensor& rows) = 0;
};

// A TransformerDecoder (in eval mode, without recording a graph) with a key/value cache: each step computes
// the new positions only. memory (B, S, d) and source_valid_lens (B) for an encoder-decoder model; leave
// them undefined for a decoder-only one.
class CachedDecoderSteps : public StepModel {
 public:
  explicit CachedDecoderSteps(TransformerDecoder& decoder, const Variable& memory = {},
                              const Tensor& source_valid_lens = {});
  Tensor next_logits(const Tensor& tokens) override;
  void select_rows(const Tensor& rows) override;
  const DecoderCache& cache() const { return cache_; }

 private:
  TransformerDecoder& decoder_;
  DecoderCache cache_;
};

// The same model without a cache: each step runs the decoder over the whole sequence so far and keeps the
// last position's logits. The reference the cache must agree with, and the baseline it is timed against.
class UncachedDecoderSteps : public StepModel {
 public:
  explicit UncachedDecoderSteps(TransformerDecoder& decoder, const Variable& memory = {},
                                const Tensor& source_valid_lens = {});
  Tensor next_logits(const Tensor& tokens) override;
  void select_rows(const Tensor& rows) override;

 private:
  TransformerDecoder& decoder_;
  Variable memory_;
  Tensor source_valid_lens_;
  Tensor tokens_;  // (B, t) int64: every token fed so far
};

struct Generation {
  // Per row, the new tokens (not the prefix), up to and including the end token if one was produced.
  std::vector<std::vector<int64_t>> tokens;
  // Per step, the logits (B, V) the step chose from (rows already finished included).
  std::vector<Tensor> logits;
};

struct GreedyOptions {
  int64_t max_new_tokens = 20;
  int64_t end_token = -1;  // a row stops once it produces this token; -1: none
};

// At each step the most likely token. prefix (B, P) int64, P >= 1: the start token(s) of every row.
Generation greedy(StepModel& model, const Tensor& prefix, const GreedyOptions& options = {});

struct SamplingOptions {
  int64_t max_new_tokens = 20;
  int64_t end_token = -1;
  // Logits are divided by the temperature before the softmax: below 1 sharpens the distribution, above 1
  // flattens it. 0 means greedy.
  double temperature = 1.0;
  int64_t top_k = 0;   // keep only the k most likely tokens; 0: all
  double top_p = 1.0;  // keep the smallest set of most likely tokens whose probability reaches p (nucleus)
};

// Draws each token from the (filtered) distribution with `generator`: the same seed, the same text.
Generation sample(StepModel& model, const Tensor& prefix, const SamplingOptions& options,
                  Generator& generator);

// The distribution sample() draws from, for one row of logits (V): temperature, then top-k, then top-p,
// renormalised. Exposed for tests.
std::vector<double> sampling_distribution(const std::vector<double>& logits, const SamplingOptions& options);

struct BeamSearchOptions {
  int64_t beam_width = 4;
  int64_t max_new_tokens = 20;
  int64_t end_token = -1;
  // Hypotheses are ranked by log P / length^length_penalty (Hugging Face's convention): 0 ranks by
  // probability alone, which favours short outputs; 1 by the mean log-probability per token.
  double length_penalty = 1.0;
};

struct Hypothesis {
  std::vector<int64_t> tokens;  // the new tokens, with the end token if finished
  double log_prob = 0;          // log P(tokens | prefix)
  double score = 0;             // log_prob / length^length_penalty
  bool finished = false;        // ended with the end token (not cut off at max_new_tokens)
};

// Keeps the beam_width best partial sequences at each step: every live hypothesis is extended by every
// token, and the beam_width best extensions that do not end survive; those that end are set aside. Stops
// when beam_width hypotheses have ended and no live one scores better at its current length (or at
// max_new_tokens). prefix (1, P): one sequence; the model
// must hold one row, which beam search copies into the beams. Returns up to beam_width hypotheses, best
// first.
std::vector<Hypothesis> beam_search(StepModel& model, const Tensor& prefix, const BeamSearchOptions& options);

}  // namespace minigrad::nn

// Training the date normaliser, measuring it, and reading one date with it.
#pragma once

#include <iosfwd>
#include <vector>

#include "examples/dates/model.h"

namespace dates {

struct Batch {
  minigrad::Tensor source;         // (B, S) int64 characters, padded with <pad> to the longest
  minigrad::Tensor source_lens;    // (B) int64
  minigrad::Tensor decoder_input;  // (B, 11): <bos> and the ISO date's first 10 characters (teacher forcing)
  minigrad::Tensor labels;         // (B, 11): the ISO date's 10 characters and <eos>
  int64_t tokens = 0;              // real source and target characters
};

// Throws minigrad::ValueError for an empty source, an unknown character, or a source longer than
// max_source_len, naming it.
Batch make_batch(const std::vector<Example>& examples, int64_t max_source_len);

struct TrainingLog {
  double seconds = 0;
  double first_loss = 0, last_loss = 0;  // mean training loss of the first and the last 50 steps
  int64_t steps = 0;
};

// Trains with AdamW, linear warm-up then cosine decay, and gradient clipping, on a fresh batch of training
// days (each in a random style) at every step. Progress goes to `out`. max_steps > 0 stops early.
TrainingLog train(Checkpoint& checkpoint, const std::vector<Date>& training_days, std::ostream& out,
                  bool interactive, int64_t max_steps = 0);

struct Evaluation {
  int64_t count = 0, correct = 0;
  double accuracy = 0;  // exact match of the whole ISO date
  double seconds = 0;
  std::vector<std::pair<Example, std::string>> mistakes;  // (example, what the model wrote)
  std::vector<std::pair<int64_t, int64_t>> by_style;      // (correct, count) per Style
};

// Exact-match accuracy with batched greedy decoding (key/value cache).
Evaluation evaluate(minigrad::nn::Transformer& model, const std::vector<Example>& examples,
                    int64_t max_source_len, int64_t batch_size = 500);

// The fixed evaluation sets of a configuration: one example per day, styles drawn from the seed.
std::vector<Example> validation_examples(const Config& config, const Split& split);
std::vector<Example> held_out_examples(const Config& config, const Split& split);

struct Prediction {
  std::string output;                           // the ISO date the model wrote
  std::vector<std::string> input_chars;         // the columns of the heatmap
  std::vector<std::string> output_chars;        // the rows: the characters written, then <eos>
  minigrad::Tensor cross_attention;             // (output_chars, input_chars), one layer averaged over heads
  std::vector<minigrad::nn::Hypothesis> beams;  // with beam_width > 1
};

// Reads one written date: greedy decoding (beam_width 1) or beam search, then the cross-attention
// weights of `layer` (of the decoder) when the decoder reads its own output.
Prediction predict(const Checkpoint& checkpoint, const std::string& text, int64_t beam_width = 1,
                   int64_t layer = -1);

}  // namespace dates

// A decoder-only (GPT-style) causal language model of movie reviews: the IMDB training reviews as one
// stream of word tokens (the sentiment example's tokenizer and vocabulary, with an end-of-review token),
// a pre-norm TransformerDecoder without cross-attention whose output projection is tied to its embedding,
// trained to predict every next token; evaluated by perplexity on the test reviews, and sampled from.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iosfwd>
#include <string>
#include <tuple>
#include <vector>

#include "examples/common/config_fields.h"
#include "examples/sentiment/text.h"
#include "minigrad/minigrad.h"

namespace lm {

using sentiment::Review;
using sentiment::Vocabulary;

struct Config {
  // data
  // 4,000 rather than 8,000: the output projection and softmax, which grow with the vocabulary, dominate
  // the cost, and the run must fit in 5 minutes (measured: docs/seq2seq-and-lm.md).
  int64_t vocab_size = 4000;  // at most, with <pad>, <unk> and <eos>
  int64_t min_freq = 2;
  int64_t context = 128;  // tokens the model sees at once (its maximum length)
  // model
  int64_t num_hiddens = 128;
  int64_t num_heads = 4;
  int64_t ffn_num_hiddens = 512;
  int64_t num_layers = 2;
  double dropout = 0.1;
  // training
  int64_t steps = 900;
  int64_t batch_size = 32;
  double lr = 2e-3;
  double weight_decay = 0.01;
  double warmup = 0.05;
  double clip = 1.0;
  uint64_t seed = 0;

  nlohmann::json to_json() const;
  // Throws naming `source` if it is not a language model's configuration or a field is missing.
  static Config from_json(const nlohmann::json& j, const std::string& source);
  std::string architecture() const;
};

// Config's table (examples/common/config_fields.h): each field's key in config.json and its `train` flag,
// range and help, in the order of `train --help`; every key is required.
// A table, a row a field:
// clang-format off
inline constexpr auto kConfigFields = std::tuple_cat(
    std::tuple{
        examples::Field{.key = "steps", .member = &Config::steps,
                        .flag = "--steps", .low = 1, .high = 1e8, .help = "Training steps"},
        examples::Field{.key = "batch_size", .member = &Config::batch_size,
                        .flag = "--batch-size", .low = 1, .high = 100000, .help = "Windows per step"},
        examples::Field{.key = "context", .member = &Config::context,
                        .flag = "--context", .low = 2, .high = 4096,
                        .help = "Tokens per window (the model's maximum length)"}},
    examples::training_fields<Config>(),  // lr, weight_decay, warmup, clip, dropout, num_hiddens, ...
    std::tuple{
        examples::Field{.key = "num_layers", .member = &Config::num_layers,
                        .flag = "--layers", .low = 1, .high = 64, .help = "Decoder layers"},
        examples::Field{.key = "vocab_size", .member = &Config::vocab_size,
                        .flag = "--vocab-size", .low = 4, .high = 1e7, .help = "Largest vocabulary"},
        examples::Field{.key = "min_freq", .member = &Config::min_freq,
                        .flag = "--min-freq", .low = 1, .high = 1e6,
                        .help = "Least count for a token to get its own id"},
        examples::Field{.key = "seed", .member = &Config::seed,
                        .flag = "--seed", .help = "Seed for initialisation, dropout and windows"}});
// clang-format on
static_assert(examples::member_count<Config>() == std::tuple_size_v<decltype(kConfigFields)>,
              "every field of Config has a row in kConfigFields");

// The vocabulary of the training reviews, with <eos> (id 2) marking the end of each review.
constexpr int64_t kEos = 2;
Vocabulary build_vocabulary(const std::vector<Review>& reviews, const Config& config);

// Reviews as one stream of token ids, each review followed by <eos>.
struct Corpus {
  std::vector<int64_t> ids;
  int64_t characters = 0;  // of the reviews' raw text: the denominator of bits per character
  int64_t reviews = 0;
};
Corpus encode(const std::vector<Review>& reviews, const Vocabulary& vocabulary);

std::shared_ptr<minigrad::nn::TransformerDecoder> make_model(const Config& config, int64_t vocab_size);

struct Checkpoint {
  Config config;
  Vocabulary vocabulary;
  std::shared_ptr<minigrad::nn::TransformerDecoder> model;

  void save(const std::filesystem::path& dir) const;
  // Refuses another kind of model's folder, naming the file.
  static Checkpoint load(const std::filesystem::path& dir);
};

struct TrainingLog {
  double seconds = 0;
  double first_loss = 0, last_loss = 0;  // mean over the first and the last 50 steps
  double tokens_per_second = 0;          // predicted tokens (batch · context) per second of training
};

// AdamW with warm-up and cosine decay on random windows of context + 1 tokens of the stream.
TrainingLog train(Checkpoint& checkpoint, const Corpus& corpus, std::ostream& out, bool interactive,
                  int64_t max_steps = 0);

struct Perplexity {
  int64_t tokens = 0;        // predicted
  double nll = 0;            // total, in nats
  double per_token = 0;      // exp(nll / tokens)
  double bits_per_char = 0;  // nll / ln 2 / characters
  double seconds = 0;
};

// The stream cut into windows of `context` tokens (each predicted from the window's earlier tokens only).
Perplexity evaluate(minigrad::nn::TransformerDecoder& model, const Corpus& corpus, int64_t context,
                    int64_t batch_size = 32);

// Tokens back into text: spaces between words, none before closing punctuation.
std::string detokenize(const std::vector<int64_t>& ids, const Vocabulary& vocabulary);

struct Sample {
  std::string text;  // the prompt's tokens and the new ones
  int64_t new_tokens = 0;
  double seconds = 0;
};

// Continues the prompt (after an <eos>, as a review starts) until <eos> or max_new_tokens, drawing from
// `generator`. A prompt longer than the context is refused; the new tokens are cut to fit the context.
Sample generate(const Checkpoint& checkpoint, const std::string& prompt,
                minigrad::nn::SamplingOptions options, minigrad::Generator& generator, bool use_cache = true);

}  // namespace lm

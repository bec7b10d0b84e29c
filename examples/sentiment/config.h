// The sentiment model's configuration: everything that defines a trained model and how it was trained,
// saved as config.json beside the weights. Each field is a member of Config (its default, and what it
// does) and a row of kConfigFields (its JSON key, its `train` flag and help, its range), which drives
// to_json, from_json, check and the flags (examples/common/config_fields.h). How each default was chosen,
// on the validation split: docs/sentiment.md, "How the options were chosen".
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <tuple>

#include "examples/common/config_fields.h"

namespace sentiment {

// Everything that defines a trained model and how it was trained. Saved as config.json beside the
// checkpoint; the defaults are the configuration the README's numbers come from.
struct Config {
  // data
  // The largest vocabulary, <pad> and <unk> included: the most frequent training tokens seen at least
  // min_freq times each; every other token reads as <unk>. A small one leaves out the rarer tokens, mostly
  // names and words of one film, which a model would learn by heart and the test films do not share.
  int64_t vocab_size = 5000;
  int64_t min_freq = 2;
  int64_t max_len = 1024;  // tokens per review; longer ones keep their first and last max_len/2
  // Training reviews held out (half of each label, drawn with validation_seed) to choose options on and
  // to report per epoch; the model trains on the rest. 0: train on all of them, no validation.
  int64_t validation = 2500;
  uint64_t validation_seed = 0;
  // model
  int64_t num_hiddens = 64;  // the width of the embeddings and of the encoder layer
  // Attention heads, which share num_hiddens: one head of 64 dimensions by default.
  int64_t num_heads = 1;
  int64_t ffn_num_hiddens = 128;  // the width of the encoder layer's feed-forward block
  int64_t num_layers = 1;         // encoder layers
  double dropout = 0.2;           // in training: after the positions, after each sublayer, before the head
  // Dropout on the attention weights, in training; its masks are (batch, heads, length, length).
  double attention_dropout = 0;
  // Label smoothing of the training loss (cross_entropy's option); validation and test losses are plain.
  // The loss then no longer pays the model to grow ever surer of reviews it knows by heart.
  double label_smoothing = 0.1;
  // The token embedding starts N(0, embedding_std²); 1 is PyTorch's default.
  double embedding_std = 1.0;
  bool learnable_positions = false;  // learned position embeddings instead of sinusoids
  // training
  int64_t batch_size = 64;  // reviews per step
  // Passes over the training reviews: the main job's model (with extras/' NB branch) fits them within
  // one; the encoder alone wants 2.
  int64_t epochs = 1;
  double lr = 2e-3;            // AdamW's peak learning rate (and SparseAdam's, for sparse tables)
  double weight_decay = 0.01;  // AdamW's; sparse tables have none
  double warmup = 0.1;         // fraction of the steps, warming up linearly before the cosine decay
  double clip = 1.0;           // the largest gradient norm; a larger one is scaled down to it
  uint64_t seed = 0;           // initialisation, dropout and batch order
  // config.json's other keys: the options of what extras/ adds (extras/extended_config.h), kept and saved
  // as they came; nothing here reads them.
  nlohmann::json extensions = nlohmann::json::object();

  nlohmann::json to_json() const;
  // Throws naming `source` if a field is missing, of the wrong type or out of range.
  static Config from_json(const nlohmann::json& j, const std::string& source);
  // Throws an Error from `op` naming the first field outside its range (the ranges `train --help` lists),
  // or fields that do not go together.
  void check(const std::string& op) const;
  // The fields that shape the model's tensors, as text (a model's extensions add theirs: model.h).
  std::string architecture() const;
};

// Config's table (examples/common/config_fields.h): each field's key in config.json, its `train` flag, range
// and help, and how a config.json from before the field existed reads it; in the order of `train --help`.
// Models saved before the validation fields had no validation split and no label smoothing.
// A table, a row a field:
// clang-format off
inline constexpr auto kConfigFields = std::tuple_cat(
    std::tuple{
        examples::Field{.key = "epochs", .member = &Config::epochs,
                        .flag = "--epochs", .low = 1, .high = 1000, .help = "Passes over the training data"},
        examples::Field{.key = "batch_size", .member = &Config::batch_size,
                        .flag = "--batch-size", .low = 1, .high = 100000, .help = "Reviews per step"}},
    examples::training_fields<Config>(),  // lr, weight_decay, warmup, clip, dropout, num_hiddens, ...
    std::tuple{
        examples::Field{.key = "attention_dropout", .member = &Config::attention_dropout,
                        .flag = "--attention-dropout", .low = 0, .high = 0.9,
                        .help = "Dropout on the attention weights"},
        examples::Field{.key = "label_smoothing", .member = &Config::label_smoothing,
                        .flag = "--label-smoothing", .low = 0, .high = 1, .before = 0,
                        .help = "Label smoothing of the training loss"},
        examples::Field{.key = "max_len", .member = &Config::max_len,
                        .flag = "--max-len", .low = 2, .high = 100000,
                        .help = "Tokens kept per review (head and tail)"},
        examples::Field{.key = "vocab_size", .member = &Config::vocab_size,
                        .flag = "--vocab-size", .low = 2, .high = 1e7, .help = "Largest vocabulary"},
        examples::Field{.key = "min_freq", .member = &Config::min_freq,
                        .flag = "--min-freq", .low = 1, .high = 1e6,
                        .help = "Least count for a token to get its own id"},
        examples::Field{.key = "validation", .member = &Config::validation,
                        .flag = "--validation", .low = 0, .high = 1e7, .before = 0,
                        .help = "Training reviews held out for validation (half of each label); 0: none"},
        examples::Field{.key = "validation_seed", .member = &Config::validation_seed,
                        .flag = "--validation-seed", .optional = true,
                        .help = "Seed that picks the validation reviews"},
        examples::Field{.key = "num_layers", .member = &Config::num_layers,
                        .flag = "--layers", .low = 1, .high = 64, .help = "Encoder layers"},
        examples::Field{.key = "embedding_std", .member = &Config::embedding_std,
                        .flag = "--embedding-std", .low = 1e-6, .high = 100,
                        .help = "Initial scale of the token embedding"},
        examples::Field{.key = "learnable_positions", .member = &Config::learnable_positions,
                        .flag = "--learnable-positions",
                        .help = "Learn position embeddings instead of sinusoids"},
        examples::Field{.key = "seed", .member = &Config::seed,
                        .flag = "--seed", .help = "Seed for initialisation, dropout and batch order"}});
// clang-format on
static_assert(examples::member_count<Config>() == std::tuple_size_v<decltype(kConfigFields)> + 1,
              "every field of Config but `extensions` has a row in kConfigFields");

}  // namespace sentiment

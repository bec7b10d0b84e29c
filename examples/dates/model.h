// The date normaliser: a character-level encoder-decoder Transformer (nn::Transformer), its settings, and
// its checkpoint folder (model.safetensors + config.json).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <tuple>

#include "examples/common/config_fields.h"
#include "examples/dates/dates.h"

namespace dates {

// Everything that defines a trained model and how it was trained; the defaults are the configuration the
// README's numbers come from. Saved as config.json.
struct Config {
  // model
  int64_t num_hiddens = 64;
  int64_t num_heads = 4;
  int64_t ffn_num_hiddens = 128;
  int64_t num_encoder_layers = 2;
  int64_t num_decoder_layers = 2;
  double dropout = 0.0;
  int64_t max_source_len = 64;  // characters
  // training
  int64_t steps = 2000;
  int64_t batch_size = 64;
  double lr = 2e-3;
  double weight_decay = 0.01;
  double warmup = 0.05;  // fraction of the steps
  double clip = 1.0;
  uint64_t seed = 0;
  // data: days of the held-out and validation sets (see split_days)
  int64_t held_out = 2000;
  int64_t validation = 1000;

  nlohmann::json to_json() const;
  // Throws naming `source` if it is not a date model's configuration or a field is missing or mistyped.
  static Config from_json(const nlohmann::json& j, const std::string& source);
  // The fields that shape the tensors, as text, recorded in the weights file.
  std::string architecture() const;
};

// Config's table (examples/common/config_fields.h): each field's key in config.json and its `train` flag,
// range and help, in the order of `train --help`; every key is required. max_source_len has no flag.
// A table, a row a field:
// clang-format off
inline constexpr auto kConfigFields = std::tuple_cat(
    std::tuple{
        examples::Field{.key = "steps", .member = &Config::steps,
                        .flag = "--steps", .low = 1, .high = 1e8, .help = "Training steps"},
        examples::Field{.key = "batch_size", .member = &Config::batch_size,
                        .flag = "--batch-size", .low = 1, .high = 100000, .help = "Dates per step"}},
    examples::training_fields<Config>(),  // lr, weight_decay, warmup, clip, dropout, num_hiddens, ...
    std::tuple{
        examples::Field{.key = "num_encoder_layers", .member = &Config::num_encoder_layers,
                        .flag = "--encoder-layers", .low = 1, .high = 64, .help = "Encoder layers"},
        examples::Field{.key = "num_decoder_layers", .member = &Config::num_decoder_layers,
                        .flag = "--decoder-layers", .low = 1, .high = 64, .help = "Decoder layers"},
        examples::Field{.key = "seed", .member = &Config::seed,
                        .flag = "--seed",
                        .help = "Seed for initialisation, the split and the training dates"},
        examples::Field{.key = "held_out", .member = &Config::held_out,
                        .flag = "--held-out", .low = 1, .high = 10000,
                        .help = "Days held out for the final evaluation"},
        examples::Field{.key = "validation", .member = &Config::validation,
                        .flag = "--validation", .low = 1, .high = 10000,
                        .help = "Days held out of training for choosing settings"},
        examples::Field{.key = "max_source_len", .member = &Config::max_source_len}});  // no flag
// clang-format on
static_assert(examples::member_count<Config>() == std::tuple_size_v<decltype(kConfigFields)>,
              "every field of Config has a row in kConfigFields");

// ISO dates are 10 characters; the decoder reads <bos> + 10 and writes 10 + <eos>.
constexpr int64_t kTargetSteps = 11;

std::shared_ptr<minigrad::nn::Transformer> make_model(const Config& config);

struct Checkpoint {
  Config config;
  std::shared_ptr<minigrad::nn::Transformer> model;

  void save(const std::filesystem::path& dir) const;
  // Refuses a folder that holds another kind of model (the sentiment classifier, say), naming the file.
  static Checkpoint load(const std::filesystem::path& dir);
};

}  // namespace dates

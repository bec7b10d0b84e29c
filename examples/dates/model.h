// The date normaliser: a character-level encoder-decoder Transformer (nn::Transformer), its settings, and
// its checkpoint folder (model.safetensors + config.json).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

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

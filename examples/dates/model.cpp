#include "examples/dates/model.h"

#include <cmath>
#include <sstream>

#include "examples/common/checkpoint_folder.h"
#include "examples/common/json_file.h"
#include "minigrad/tensor/file_io.h"

namespace dates {

using namespace minigrad;
using json = nlohmann::json;

namespace {

// Written into config.json and the weights file, so that a folder of another kind of model is refused.
constexpr const char* kKind = "minigrad-dates";

}  // namespace

json Config::to_json() const {
  json j = examples::fields_to_json(*this, kConfigFields);
  j["kind"] = kKind;  // another program refuses this checkpoint
  return j;
}

Config Config::from_json(const json& j, const std::string& source) {
  examples::check_config_kind(j, source, kKind, "a date model");
  return examples::fields_from_json<Config>(j, kConfigFields, "checkpoint", source);
}

std::string Config::architecture() const {
  std::ostringstream s;
  s << kKind << " num_hiddens=" << num_hiddens << " num_heads=" << num_heads
    << " ffn_num_hiddens=" << ffn_num_hiddens << " num_encoder_layers=" << num_encoder_layers
    << " num_decoder_layers=" << num_decoder_layers << " max_source_len=" << max_source_len;
  return s.str();
}

std::shared_ptr<nn::Transformer> make_model(const Config& c) {
  if (c.num_hiddens % c.num_heads != 0) throw ValueError("dates", "num_heads must divide num_hiddens");
  const nn::TransformerLayerOptions layer{.num_hiddens = c.num_hiddens,
                                          .ffn_num_hiddens = c.ffn_num_hiddens,
                                          .num_heads = c.num_heads,
                                          .dropout = c.dropout};
  auto model = std::make_shared<nn::Transformer>(
      nn::TransformerOptions{.encoder = {.layer = layer,
                                         .num_layers = c.num_encoder_layers,
                                         .tokens = {.vocab_size = CharVocabulary::kSize,
                                                    .max_len = c.max_source_len,
                                                    .padding_idx = CharVocabulary::kPad}},
                             .decoder = {.layer = layer,
                                         .num_layers = c.num_decoder_layers,
                                         .tokens = {.vocab_size = CharVocabulary::kSize,
                                                    .max_len = kTargetSteps,
                                                    .padding_idx = CharVocabulary::kPad}}});
  // Embeddings N(0, 1/d) rather than PyTorch's N(0, 1): after the ·√d of the forward pass they are of size 1,
  // like the positional encoding. With N(0, 1) they are √d = 8 times larger and drown the positions, which
  // this task needs to copy digits in order (73.5% validation exact match after 2,000 steps, against
  // the README's figure with this initialisation).
  for (const auto& embedding : {model->encoder->embedding, model->decoder->embedding}) {
    const Tensor& table = embedding->weight.data();
    table.copy_(Tensor::normal(table.shape(), 0, 1 / std::sqrt(static_cast<double>(c.num_hiddens))));
    table.select(0, CharVocabulary::kPad).zero_();
  }
  return model;
}

void Checkpoint::save(const std::filesystem::path& dir) const {
  examples::save_checkpoint_folder(dir, config.to_json(), std::nullopt, *model,
                                   {{"architecture", config.architecture()}});
}

Checkpoint Checkpoint::load(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    throw Error("checkpoint", dir.string() + " is not a folder (train a model first, or pass --model DIR)");
  const Config config =
      Config::from_json(examples::parse_json(dir / "config.json"), (dir / "config.json").string());
  const std::string weights = (dir / "model.safetensors").string();
  const SafetensorsFile file = load_safetensors(weights);
  examples::check_architecture(file, weights, config.architecture());
  auto model = make_model(config);
  optim::load_weights(*model, file, weights);
  model->eval();
  return Checkpoint{config, std::move(model)};
}

}  // namespace dates

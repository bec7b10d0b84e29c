#include "examples/sentiment/checkpoint.h"

#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "examples/common/checkpoint_folder.h"
#include "examples/common/json_file.h"

namespace sentiment {

using namespace minigrad;
using examples::parse_json;
using json = nlohmann::json;

namespace {

// A short fingerprint of the vocabulary: the same tokens in the same order give the same text.
std::string fingerprint(const Vocabulary& v) {
  size_t h = 0;
  for (const std::string& t : v.tokens()) h = h * 1000003u ^ std::hash<std::string>{}(t);
  std::ostringstream s;
  s << v.size() << " tokens, hash " << std::hex << h;
  return s.str();
}

}  // namespace

std::shared_ptr<SentimentModel> build_plain_model(const Config& config, const Vocabulary& vocabulary,
                                                  const std::filesystem::path&, const SafetensorsFile&) {
  return std::make_shared<SentimentModel>(config, vocabulary.size());
}

void Checkpoint::save(const std::filesystem::path& dir, const std::vector<FolderFile>& extra) const {
  std::map<std::string, std::string> metadata = {{"architecture", model->architecture()},
                                                 {"vocabulary", fingerprint(vocabulary)}};
  std::vector<FolderFile> files = extra;
  if (model->token_features) model->token_features->save_beside(vocabulary, metadata, files);
  examples::save_checkpoint_folder(dir, config.to_json(), vocabulary.tokens(), *model, metadata, files);
}

Checkpoint Checkpoint::load(const std::filesystem::path& dir, const BuildModel& build) {
  if (!std::filesystem::is_directory(dir)) {
    throw Error("checkpoint", dir.string() + " is not a folder (train a model first, or pass --model DIR)");
  }
  const Config config = Config::from_json(parse_json(dir / "config.json"), (dir / "config.json").string());
  const std::string vocab_file = (dir / "vocab.json").string();
  const json tokens = parse_json(vocab_file);
  if (!tokens.is_array()) throw Error("checkpoint", vocab_file + " is not a list of tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_string()) {
      throw Error("checkpoint",
                  vocab_file + ": token " + std::to_string(i) + " is " + tokens[i].dump() + ", not a string");
    }
  }
  Vocabulary vocabulary = [&] {
    try {
      return Vocabulary(tokens.get<std::vector<std::string>>());
    } catch (const Error& e) {  // a duplicate token, an empty one
      throw Error("checkpoint", vocab_file + ": " + e.detail());
    }
  }();

  const std::string weights = (dir / "model.safetensors").string();
  const SafetensorsFile file = load_safetensors(weights);
  auto recorded = [&](const std::string& key) {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? std::string("(not recorded)") : it->second;
  };
  if (recorded("vocabulary") != fingerprint(vocabulary)) {
    throw Error("checkpoint", weights + " was trained with a vocabulary of " + recorded("vocabulary") +
                                  ", but vocab.json has " + fingerprint(vocabulary));
  }
  const std::shared_ptr<SentimentModel> model = build(config, vocabulary, dir, file);
  if (recorded("architecture") != model->architecture()) {
    // A model saved with extensions (extras/), loaded without them: its architecture goes on past this one's.
    const bool extended = recorded("architecture").starts_with(model->architecture() + " ");
    throw Error("checkpoint", weights + " was trained with " + recorded("architecture") +
                                  ", but config.json says " + model->architecture() +
                                  (extended ? " (without the extensions the weights were saved with: load it "
                                              "with the BuildModel that makes them)"
                                            : ""));
  }
  optim::load_weights(*model, file, weights);
  if (model->review_logits) {
    try {
      model->review_logits->weights_loaded();
    } catch (const Error& e) {
      throw Error("checkpoint", weights + ": " + e.detail());
    }
  }
  // A model whose weights hold a NaN or an infinity (saved from a diverged run, or damaged) would predict
  // NaN for every review: refuse it here, naming the tensor.
  for (const auto& [name, p] : model->named_parameters()) {
    if (!std::isfinite(minigrad::sum(p.data()).item())) {
      throw Error("checkpoint",
                  weights + ": " + name + " holds a NaN or an infinity; the model cannot be used");
    }
  }
  model->eval();
  return Checkpoint{config, std::move(vocabulary), model};
}

}  // namespace sentiment

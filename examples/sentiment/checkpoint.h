// A trained sentiment model with what it needs to read text, and its folder on disk.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "examples/sentiment/model.h"
#include "examples/sentiment/text.h"
#include "minigrad/tensor/file_io.h"

namespace sentiment {

// Makes the model that a checkpoint folder's configuration asks for, before its weights are loaded:
// `weights` is the folder's model file, for the metadata its extensions saved (TokenFeatures::save_beside).
using BuildModel = std::function<std::shared_ptr<SentimentModel>(
    const Config& config, const Vocabulary& vocabulary, const std::filesystem::path& dir,
    const minigrad::SafetensorsFile& weights)>;
// The model without extensions (a checkpoint of a model with them then fails its architecture check).
std::shared_ptr<SentimentModel> build_plain_model(const Config& config, const Vocabulary& vocabulary,
                                                  const std::filesystem::path& dir,
                                                  const minigrad::SafetensorsFile& weights);

// A trained model with what it needs to read text: saved as a folder of model.safetensors, config.json
// and vocab.json (and what the model's extensions keep beside them).
struct Checkpoint {
  Config config;
  Vocabulary vocabulary;
  std::shared_ptr<SentimentModel> model;

  // Replaces the folder `dir` whole (tensor/file_io.h); `extra` files (a training state) go in with it.
  void save(const std::filesystem::path& dir, const std::vector<minigrad::FolderFile>& extra = {}) const;
  // Checks that the files belong together (the model file records the configuration and the vocabulary
  // it was trained with) and says which file disagrees if not. The main job's models have extensions:
  // load them with extras/extended_model.h's build_extended_model.
  static Checkpoint load(const std::filesystem::path& dir, const BuildModel& build = build_plain_model);
};

}  // namespace sentiment

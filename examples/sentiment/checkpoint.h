// A trained sentiment model with what it needs to read text, and its folder on disk.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "examples/sentiment/model.h"
#include "examples/sentiment/text.h"
#include "minigrad/tensor/file_io.h"

namespace sentiment {

// A trained model with what it needs to read text: saved as a folder of model.safetensors, config.json
// and vocab.json.
struct Checkpoint {
  Config config;
  Vocabulary vocabulary;
  std::shared_ptr<SentimentModel> model;

  // Replaces the folder `dir` whole (tensor/file_io.h); `extra` files (a training state) go in with it.
  void save(const std::filesystem::path& dir, const std::vector<minigrad::FolderFile>& extra = {}) const;
  // Checks that the three files belong together (the model file records the configuration and the
  // vocabulary it was trained with) and says which file disagrees if not.
  static Checkpoint load(const std::filesystem::path& dir);
};

}  // namespace sentiment

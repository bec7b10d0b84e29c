// Saving a program's checkpoint folder — config.json, model.safetensors, where the model reads words
// vocab.json, and any `extra` files (a training state to resume from) — as one atomic whole
// (tensor/file_io.h): a crash or an error during a save leaves the previous checkpoint complete.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "minigrad/optim/checkpoint.h"
#include "minigrad/tensor/file_io.h"

namespace examples {

inline void save_checkpoint_folder(const std::filesystem::path& dir, const nlohmann::json& config,
                                   const std::optional<std::vector<std::string>>& vocabulary,
                                   const minigrad::nn::Module& model,
                                   const std::map<std::string, std::string>& metadata,
                                   const std::vector<minigrad::FolderFile>& extra = {}) {
  // Everything that can fail for a reason of the data's own (JSON refuses text that is not UTF-8) is
  // done here, in memory, before the old checkpoint is touched.
  std::vector<minigrad::FolderFile> files;
  try {
    files.emplace_back("config.json", config.dump(2) + "\n");
    if (vocabulary) files.emplace_back("vocab.json", nlohmann::json(*vocabulary).dump() + "\n");
  } catch (const nlohmann::json::exception& e) {
    throw minigrad::Error("checkpoint", "cannot save " + dir.string() + ": " + e.what());
  }
  files.emplace_back("model.safetensors", minigrad::optim::serialize_weights(model, metadata));
  files.insert(files.end(), extra.begin(), extra.end());
  minigrad::write_folder_atomically(dir.string(), files);
}

}  // namespace examples

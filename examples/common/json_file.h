// Reading the small text and JSON files of a checkpoint folder, with errors that name the file.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tensor/error.h"

namespace examples {

inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw minigrad::Error("checkpoint", "cannot open " + file.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json parse_json(const std::filesystem::path& file) {
  try {
    return nlohmann::json::parse(read_text(file));
  } catch (const nlohmann::json::exception& e) {
    throw minigrad::Error("checkpoint", file.string() + " is not valid JSON: " + e.what());
  }
}

}  // namespace examples

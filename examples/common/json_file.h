// Reading and checking the small files of a checkpoint folder (config.json, the weights' metadata), with
// errors that name the file.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "minigrad/tensor/error.h"
#include "minigrad/tensor/file_io.h"
#include "minigrad/tensor/safetensors.h"

namespace examples {

// A checkpoint's JSON file, read as an untrusted regular file (minigrad::read_file) and parsed.
inline nlohmann::json parse_json(const std::filesystem::path& file) {
  try {
    return nlohmann::json::parse(minigrad::read_file("checkpoint", file.string()));
  } catch (const nlohmann::json::exception& e) {
    throw minigrad::Error("checkpoint", file.string() + " is not valid JSON: " + e.what());
  }
}

// config.json of a model: the Config's fields (to_json/from_json found by argument-dependent lookup) and a
// "kind" naming the program, so that one program refuses another's checkpoint.
template <typename Config>
nlohmann::json config_to_json(const Config& config, const std::string& kind) {
  nlohmann::json j = config;
  j["kind"] = kind;
  return j;
}

// Refuses a config.json that is not of this `kind` of model; `description` says what the caller expected,
// for the error: "a date model".
inline void check_config_kind(const nlohmann::json& j, const std::string& source, const std::string& kind,
                              const std::string& description) {
  if (!j.is_object() || !j.contains("kind")) {
    throw minigrad::Error("checkpoint", source + " is not the configuration of " + description +
                                            " (it has no \"kind\": \"" + kind +
                                            "\"; another kind of model?)");
  }
  if (j["kind"] != kind) {
    throw minigrad::Error("checkpoint", source + " is the configuration of a " + j["kind"].dump() +
                                            " model, not of " + description);
  }
}

// A Config with nlohmann's to_json/from_json, of this `kind` (a field table reads one with
// check_config_kind and fields_from_json, config_fields.h).
template <typename Config>
Config config_from_json(const nlohmann::json& j, const std::string& source, const std::string& kind,
                        const std::string& description) {
  check_config_kind(j, source, kind, description);
  Config config;
  try {
    config = j.get<Config>();
  } catch (const nlohmann::json::exception& e) {
    throw minigrad::Error("checkpoint", source + ": " + e.what());
  }
  // JSON numbers convert to any numeric field, so 2.7 reads as 2 into an integer: a field whose value
  // does not survive the round trip was of the wrong kind.
  const nlohmann::json read_back = config;
  for (const auto& [key, value] : read_back.items()) {
    if (!j.contains(key) || j[key] == value) continue;
    const std::string wanted = value.is_boolean()          ? "true or false"
                               : value.is_number_integer() ? "a whole number"
                               : value.is_number()         ? "a number"
                                                           : std::string("a ") + value.type_name();
    throw minigrad::Error("checkpoint",
                          source + ": '" + key + "' must be " + wanted + ", got " + j[key].dump());
  }
  return config;
}

// The weights file records the architecture it was saved with; it must be the one config.json describes.
inline void check_architecture(const minigrad::SafetensorsFile& file, const std::string& weights,
                               const std::string& expected) {
  const auto recorded = file.metadata.find("architecture");
  const std::string architecture = recorded == file.metadata.end() ? "(not recorded)" : recorded->second;
  if (architecture != expected) {
    throw minigrad::Error(
        "checkpoint", weights + " holds a model of " + architecture + ", but config.json says " + expected);
  }
}

}  // namespace examples

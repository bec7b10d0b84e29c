// A program's configuration declared once: the struct holds each field with its default (and why), and
// one table row per field says the rest — its key in config.json, its `train` flag and help text, its
// range, and how a config.json saved before the field existed reads. The table drives the JSON both
// ways, the range checks, and the flags (config_flags.h): adding a field is a member and a row.
//
//   struct Config { int64_t epochs = 1; double lr = 2e-3; };
//   inline constexpr std::tuple kConfigFields{
//       examples::Field{.key = "epochs", .member = &Config::epochs,
//                       .flag = "--epochs", .low = 1, .high = 1000, .help = "Passes over the training data"},
//       examples::Field{.key = "lr", .member = &Config::lr, .flag = "--lr", .help = "Peak learning rate"}};
//   static_assert(examples::member_count<Config>() == std::tuple_size_v<decltype(kConfigFields)>);
//   nlohmann::json j = examples::fields_to_json(config, kConfigFields);
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

#include "minigrad/tensor/error.h"

namespace examples {

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// One field of `Config`, a number or a bool.
template <typename Config, typename T>
struct Field {
  const char* key;    // in config.json, and in check()'s errors
  T Config::*member;  // where the value lives
  // On the command line: "--batch-size". A bool's flag sets it, or clears it when the flag starts with
  // '!' ("!--hashed-ngrams"). nullptr: the field has no flag.
  const char* flag = nullptr;
  // The range check() holds the value to, and the flag's (a whole-number field's bounds are whole).
  double low = -kUnbounded, high = kUnbounded;
  // A config.json without the key — saved before the field existed — is refused, unless `optional`
  // (then the field keeps its default) or `before` is given: the value that keeps such a model as it
  // was trained (models from before the n-gram table had none: ngram_buckets 0).
  bool optional = false;
  std::optional<std::type_identity_t<T>> before = std::nullopt;
  const char* help = "";  // the flag's, in --help

  bool bounded() const { return low > -kUnbounded || high < kUnbounded; }
};

// Calls visit(field) for each row of a table, in order.
template <typename Fields, typename Visit>
void for_each_field(const Fields& fields, Visit&& visit) {
  std::apply([&](const auto&... field) { (visit(field), ...); }, fields);
}

// {"key": value, ...} for every row (nlohmann's objects keep their keys sorted).
template <typename Config, typename Fields>
nlohmann::json fields_to_json(const Config& config, const Fields& fields) {
  nlohmann::json j = nlohmann::json::object();
  for_each_field(fields, [&](const auto& field) { j[field.key] = config.*field.member; });
  return j;
}

// A Config read from `j`, which `source` names in errors (Error from `op`): a key missing that is not
// optional, or a value of the wrong kind. JSON numbers all convert to each other, so a whole-number
// field must not take 2.7 as 2 (nor an unsigned one -1 as 2⁶⁴ - 1). Ranges are not checked here.
template <typename Config, typename Fields>
Config fields_from_json(const nlohmann::json& j, const Fields& fields, const std::string& op,
                        const std::string& source) {
  if (!j.is_object()) throw minigrad::Error(op, source + ": not a JSON object");
  Config config;
  for_each_field(fields, [&](const auto& field) {
    using T = std::remove_cvref_t<decltype(config.*field.member)>;
    static_assert(std::is_arithmetic_v<T>, "a field is a number or a bool");
    const std::string key = field.key;
    if (!j.contains(key)) {
      if (field.before) {
        config.*field.member = *field.before;
      } else if (!field.optional) {
        throw minigrad::Error(op, source + ": missing '" + key + "'");
      }
      return;
    }
    const nlohmann::json& value = j.at(key);
    const bool fits = std::is_same_v<T, bool> ? value.is_boolean()
                      : std::is_unsigned_v<T> ? value.is_number_unsigned()
                      : std::is_integral_v<T> ? value.is_number_integer()
                                              : value.is_number();
    const char* wanted = std::is_same_v<T, bool> ? "true or false"
                         : std::is_integral_v<T> ? "a whole number"
                                                 : "a number";
    if (!fits)
      throw minigrad::Error(op, source + ": '" + key + "' must be " + wanted + ", got " + value.dump());
    try {
      value.get_to(config.*field.member);
    } catch (const nlohmann::json::exception&) {
      throw minigrad::Error(op, source + ": '" + key + "' has the wrong type");
    }
  });
  return config;
}

// Throws a ValueError from `op` naming the first field outside its range: "vocab_size is 1, outside
// [2, 1e+07]".
template <typename Config, typename Fields>
void check_fields(const Config& config, const Fields& fields, const std::string& op) {
  for_each_field(fields, [&](const auto& field) {
    const double value = static_cast<double>(config.*field.member);
    if (field.bounded() && !(value >= field.low && value <= field.high)) {
      std::ostringstream s;
      s << field.key << " is " << value << ", outside [" << field.low << ", " << field.high << "]";
      throw minigrad::ValueError(op, s.str());
    }
  });
}

// The fields every program's Config has, by these names: the optimiser's and the Transformer's.
template <typename Config>
constexpr auto training_fields() {
  // A table, a row a field:
  // clang-format off
  return std::tuple{
      Field{.key = "lr", .member = &Config::lr,
            .flag = "--lr", .low = 1e-7, .high = 10, .help = "Peak learning rate (AdamW)"},
      Field{.key = "weight_decay", .member = &Config::weight_decay,
            .flag = "--weight-decay", .low = 0, .high = 1, .help = "AdamW weight decay"},
      Field{.key = "warmup", .member = &Config::warmup,
            .flag = "--warmup", .low = 0, .high = 0.9, .help = "Fraction of steps spent warming up"},
      Field{.key = "clip", .member = &Config::clip,
            .flag = "--clip", .low = 1e-6, .high = 1e6, .help = "Gradient norm limit"},
      Field{.key = "dropout", .member = &Config::dropout,
            .flag = "--dropout", .low = 0, .high = 0.9, .help = "Dropout probability"},
      Field{.key = "num_hiddens", .member = &Config::num_hiddens,
            .flag = "--hiddens", .low = 2, .high = 4096, .help = "Model width"},
      Field{.key = "num_heads", .member = &Config::num_heads,
            .flag = "--heads", .low = 1, .high = 256, .help = "Attention heads (must divide --hiddens)"},
      Field{.key = "ffn_num_hiddens", .member = &Config::ffn_num_hiddens,
            .flag = "--ffn", .low = 1, .high = 65536, .help = "Width of the position-wise FFN"}};
  // clang-format on
}

namespace detail {
// Converts to anything: T{AnyValue{}, ...} compiles for as many values as the aggregate T has members.
struct AnyValue {
  template <typename T>
  constexpr operator T() const;  // never defined: only asked about in requires-expressions
};
template <typename T, typename... Values>
constexpr size_t member_count() {
  if constexpr (requires { T{Values{}..., AnyValue{}}; })
    return member_count<T, Values..., AnyValue>();
  else
    return sizeof...(Values);
}
}  // namespace detail

// How many members the aggregate Config has: a table that lists fewer has forgotten one, which then
// would be neither saved nor read.
template <typename Config>
constexpr size_t member_count() {
  return detail::member_count<Config>();
}

}  // namespace examples

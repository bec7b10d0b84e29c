#include "examples/sentiment/config.h"

#include <sstream>

#include "minigrad/tensor/error.h"

namespace sentiment {

using namespace minigrad;
using json = nlohmann::json;

json Config::to_json() const {
  json j = extensions;
  j.update(examples::fields_to_json(*this, kConfigFields));
  return j;
}

Config Config::from_json(const json& j, const std::string& source) {
  // Fields added later are optional, with the value that means "as before": older checkpoints still load.
  Config c = examples::fields_from_json<Config>(j, kConfigFields, "config", source);
  c.extensions = j;
  examples::for_each_field(kConfigFields, [&](const auto& field) { c.extensions.erase(field.key); });
  c.check("config: " + source);
  return c;
}

void Config::check(const std::string& op) const {
  examples::check_fields(*this, kConfigFields, op);
  if (num_hiddens % num_heads != 0) {
    throw ValueError(op, "num_heads (" + std::to_string(num_heads) + ") must divide num_hiddens (" +
                             std::to_string(num_hiddens) + ")");
  }
}

std::string Config::architecture() const {
  std::ostringstream s;
  s << "max_len=" << max_len << " num_hiddens=" << num_hiddens << " num_heads=" << num_heads
    << " ffn_num_hiddens=" << ffn_num_hiddens << " num_layers=" << num_layers
    << " learnable_positions=" << learnable_positions;
  return s.str();
}

}  // namespace sentiment

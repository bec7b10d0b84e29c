#include "optim/checkpoint.h"

#include <bit>
#include <set>
#include <string_view>
#include <unordered_map>

namespace minigrad::optim {

namespace {

constexpr const char* kOptimizerPrefix = "optimizer.";
constexpr const char* kGeneratorTensor = "generator.state";

// "a, b, c and 4 more"
std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  const size_t shown = std::min<size_t>(names.size(), 8);
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

}  // namespace

namespace {
std::vector<std::pair<std::string, Tensor>> named_tensors(const nn::Module& module) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, p] : module.named_parameters()) tensors.emplace_back(name, p.data());
  for (const auto& [name, b] : module.named_buffers()) tensors.emplace_back(name, b.data());
  return tensors;
}
}  // namespace

void save_weights(const nn::Module& module, const std::string& path,
                  const std::map<std::string, std::string>& metadata) {
  save_safetensors(path, named_tensors(module), metadata);
}

std::string serialize_weights(const nn::Module& module, const std::map<std::string, std::string>& metadata) {
  return serialize_safetensors(named_tensors(module), metadata);
}

void load_weights(nn::Module& module, const SafetensorsFile& file, const std::string& source) {
  std::vector<std::pair<std::string, Variable>> expected = module.named_parameters();
  for (auto& entry : module.named_buffers()) expected.push_back(entry);

  // Indexed once: a file from elsewhere may hold many thousands of tensors.
  std::unordered_map<std::string_view, const Tensor*> in_file;
  for (const auto& [name, t] : file.tensors) in_file.emplace(name, &t);
  std::vector<std::string> missing, unexpected, mismatched;
  std::set<std::string, std::less<>> known;
  for (const auto& [name, v] : expected) {
    known.insert(name);
    const auto found = in_file.find(name);
    const Tensor* t = found == in_file.end() ? nullptr : found->second;
    if (!t) {
      missing.push_back(name);
    } else if (t->shape() != v.shape() || is_floating(t->dtype()) != is_floating(v.dtype()) ||
               (!is_floating(v.dtype()) && t->dtype() != v.dtype())) {
      mismatched.push_back(name + " is " + std::string(dtype_name(t->dtype())) + " " + t->shape().str() +
                           " in the file but " + std::string(dtype_name(v.dtype())) + " " + v.shape().str() +
                           " in the module");
    }
  }
  for (const auto& [name, t] : file.tensors) {
    if (!known.count(name)) unexpected.push_back(name);
  }
  if (!missing.empty() || !unexpected.empty() || !mismatched.empty()) {
    std::string problem = "does not match the " + module.name() + ":";
    if (!missing.empty()) problem += " missing " + list_names(missing) + ";";
    if (!unexpected.empty()) problem += " unexpected " + list_names(unexpected) + ";";
    if (!mismatched.empty()) problem += " " + list_names(mismatched) + ";";
    problem.pop_back();
    throw Error("load_weights", source + ": " + problem);
  }
  NoGradGuard no_grad;
  for (const auto& [name, v] : expected) v.data().copy_(*in_file.at(name));
}

void load_weights(nn::Module& module, const std::string& path) {
  load_weights(module, load_safetensors(path), path);
}

void save_training_state(const std::string& path, const Optimizer& optimizer, const Generator& generator,
                         int64_t step, const std::map<std::string, std::string>& metadata) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, t] : optimizer.state_tensors()) tensors.emplace_back(kOptimizerPrefix + name, t);
  // The generator's four 64-bit words, stored bit for bit as int64.
  std::vector<int64_t> words;
  for (uint64_t w : generator.state()) words.push_back(std::bit_cast<int64_t>(w));
  tensors.emplace_back(kGeneratorTensor, Tensor::from_vector(words, {4}));
  std::map<std::string, std::string> meta = metadata;
  meta["optimizer"] = optimizer.name();
  meta["step"] = std::to_string(step);
  meta["parameters"] = std::to_string(optimizer.parameters().size());
  save_safetensors(path, tensors, meta);
}

int64_t load_training_state(const std::string& path, Optimizer& optimizer, Generator& generator) {
  const SafetensorsFile file = load_safetensors(path);
  auto meta = [&](const std::string& key) {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end())
      throw Error("load_training_state", path + ": no '" + key + "' in the metadata");
    return it->second;
  };
  if (meta("optimizer") != optimizer.name()) {
    throw Error("load_training_state",
                path + ": holds the state of " + meta("optimizer") + ", not " + optimizer.name());
  }
  if (meta("parameters") != std::to_string(optimizer.parameters().size())) {
    throw Error("load_training_state", path + ": saved for " + meta("parameters") +
                                           " parameters, the optimizer has " +
                                           std::to_string(optimizer.parameters().size()));
  }
  int64_t step = 0;
  try {
    size_t used = 0;
    step = std::stoll(meta("step"), &used);
    if (used != meta("step").size()) throw std::invalid_argument("trailing characters");
  } catch (const std::logic_error&) {
    throw Error("load_training_state", path + ": step '" + meta("step") + "' is not a whole number");
  }
  const Tensor* words = file.find(kGeneratorTensor);
  if (!words || words->dtype() != DType::Int64 || words->shape() != Shape{4}) {
    throw Error("load_training_state",
                path + ": '" + std::string(kGeneratorTensor) + "' is missing or not int64 [4]");
  }
  std::vector<std::pair<std::string, Tensor>> state;
  const std::string prefix = kOptimizerPrefix;
  for (const auto& [name, t] : file.tensors) {
    if (name == kGeneratorTensor) continue;
    if (name.rfind(prefix, 0) != 0)
      throw Error("load_training_state", path + ": unexpected tensor '" + name + "'");
    state.emplace_back(name.substr(prefix.size()), t);
  }
  try {
    optimizer.load_state_tensors(state);
  } catch (const Error& e) {
    throw Error("load_training_state", path + ": " + e.detail());
  }
  Generator::State s;
  const std::vector<int64_t> w = words->to_vector<int64_t>();
  for (size_t i = 0; i < 4; ++i) s[i] = std::bit_cast<uint64_t>(w[i]);
  generator.set_state(s);
  return step;
}

}  // namespace minigrad::optim

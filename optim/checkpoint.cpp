#include "minigrad/optim/checkpoint.h"

#include "minigrad/tensor/file_io.h"

#include <bit>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace minigrad::optim {

namespace {

constexpr const char* kGeneratorPrefix = "generator.";
constexpr const char* kAveragePrefix = "ema.";

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

LoadedWeights load_weights(nn::Module& module, const SafetensorsFile& file, const std::string& source,
                           LoadWeightsOptions options) {
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
  if (!mismatched.empty() || (options.strict && (!missing.empty() || !unexpected.empty()))) {
    std::string problem = "does not match the " + module.name() + ":";
    if (!options.strict) {  // a non-strict load minds shapes only
      missing.clear();
      unexpected.clear();
    }
    if (!missing.empty()) problem += " missing " + list_names(missing) + ";";
    if (!unexpected.empty()) problem += " unexpected " + list_names(unexpected) + ";";
    if (!mismatched.empty()) problem += " " + list_names(mismatched) + ";";
    problem.pop_back();
    throw Error("load_weights", source + ": " + problem);
  }
  NoGradGuard no_grad;
  for (const auto& [name, v] : expected) {
    const auto found = in_file.find(name);
    if (found != in_file.end()) v.data().copy_(*found->second);
  }
  return {std::move(missing), std::move(unexpected)};
}

LoadedWeights load_weights(nn::Module& module, const std::string& path, LoadWeightsOptions options) {
  return load_weights(module, load_safetensors(path), path, options);
}

namespace {
// Optimizer k's prefix and metadata keys: "optimizer." / "optimizer", "parameters" for the first (as a
// file of one optimizer has them), "optimizerK." / "optimizerK", "parametersK" for the others.
std::string optimizer_key(size_t k) {
  return k == 0 ? "optimizer" : "optimizer" + std::to_string(k);
}
std::string parameters_key(size_t k) {
  return k == 0 ? "parameters" : "parameters" + std::to_string(k);
}

}  // namespace

std::string serialize_training_state(const Optimizer& optimizer, const TrainingState& state) {
  return serialize_training_state(std::vector<const Optimizer*>{&optimizer}, state);
}

std::string serialize_training_state(const std::vector<const Optimizer*>& optimizers,
                                     const TrainingState& state) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, std::string> meta = state.metadata;
  for (size_t k = 0; k < optimizers.size(); ++k) {
    for (const auto& [name, t] : optimizers[k]->state_tensors())
      tensors.emplace_back(optimizer_key(k) + "." + name, t);
    meta[optimizer_key(k)] = optimizers[k]->name();
    meta[parameters_key(k)] = std::to_string(optimizers[k]->parameters().size());
  }
  for (const auto& [name, words] : state.generators) {
    // The generator's four 64-bit words, stored bit for bit as int64.
    std::vector<int64_t> w;
    for (uint64_t word : words) w.push_back(std::bit_cast<int64_t>(word));
    tensors.emplace_back(kGeneratorPrefix + name, Tensor::from_vector(w, {4}));
  }
  for (const auto& [name, t] : state.averages) tensors.emplace_back(kAveragePrefix + name, t);
  meta["step"] = std::to_string(state.step);
  return serialize_safetensors(tensors, meta);
}

TrainingState load_training_state(const SafetensorsFile& file, const std::string& source,
                                  Optimizer& optimizer) {
  return load_training_state(file, source, std::vector<Optimizer*>{&optimizer});
}

TrainingState load_training_state(const SafetensorsFile& file, const std::string& source,
                                  const std::vector<Optimizer*>& optimizers) {
  auto meta = [&](const std::string& key) {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end())
      throw Error("load_training_state", source + ": no '" + key + "' in the metadata");
    return it->second;
  };
  const size_t n = optimizers.size();
  for (size_t k = 0; k < n; ++k) {
    const Optimizer& optimizer = *optimizers[k];
    const std::string which =
        n > 1 ? " (optimizer " + std::to_string(k + 1) + " of " + std::to_string(n) + ")" : "";
    if (meta(optimizer_key(k)) != optimizer.name()) {
      throw Error("load_training_state", source + ": holds the state of " + meta(optimizer_key(k)) +
                                             ", not " + optimizer.name() + which);
    }
    if (meta(parameters_key(k)) != std::to_string(optimizer.parameters().size())) {
      throw Error("load_training_state", source + ": saved for " + meta(parameters_key(k)) +
                                             " parameters, the optimizer has " +
                                             std::to_string(optimizer.parameters().size()) + which);
    }
  }
  if (file.metadata.count(optimizer_key(n))) {
    throw Error("load_training_state", source + ": holds the state of more than " + std::to_string(n) +
                                           " optimizer(s) (" + meta(optimizer_key(n)) + " is one more)");
  }
  TrainingState state;
  state.metadata = file.metadata;
  try {
    size_t used = 0;
    state.step = std::stoll(meta("step"), &used);
    if (used != meta("step").size() || state.step < 0) throw std::invalid_argument("not a step");
  } catch (const std::logic_error&) {
    throw Error("load_training_state", source + ": step '" + meta("step") + "' is not a whole number");
  }
  std::vector<std::vector<std::pair<std::string, Tensor>>> optimizer_state(n);
  for (const auto& [name, t] : file.tensors) {
    // The optimizer whose prefix the name starts with: "optimizer." is the first, "optimizerK." the k-th.
    size_t owner = n;
    for (size_t k = 0; k < n && owner == n; ++k)
      if (name.rfind(optimizer_key(k) + ".", 0) == 0) owner = k;
    if (name.rfind(kGeneratorPrefix, 0) == 0) {
      if (t.dtype() != DType::Int64 || t.shape() != Shape{4}) {
        throw Error("load_training_state", source + ": '" + name + "' is not int64 [4]");
      }
      Generator::State words;
      const std::vector<int64_t> w = t.to_vector<int64_t>();
      for (size_t i = 0; i < 4; ++i) words[i] = std::bit_cast<uint64_t>(w[i]);
      state.generators[name.substr(std::string(kGeneratorPrefix).size())] = words;
    } else if (owner < n) {
      optimizer_state[owner].emplace_back(name.substr(optimizer_key(owner).size() + 1), t);
    } else if (name.rfind(kAveragePrefix, 0) == 0) {
      state.averages.emplace_back(name.substr(std::string(kAveragePrefix).size()), t);
    } else {
      throw Error("load_training_state", source + ": unexpected tensor '" + name + "'");
    }
  }
  // Each optimizer checks its tensors before it takes them; if a later one refuses, the earlier ones get
  // their old state back, so that a bad file changes nothing.
  std::vector<std::vector<std::pair<std::string, Tensor>>> before;
  for (size_t k = 0; k < n; ++k) {
    try {
      before.push_back(optimizers[k]->state_tensors());
      optimizers[k]->load_state_tensors(optimizer_state[k]);
    } catch (const Error& e) {
      for (size_t j = 0; j < k; ++j) optimizers[j]->load_state_tensors(before[j]);
      throw Error("load_training_state", source + ": " + e.detail());
    }
  }
  return state;
}

void save_training_state(const std::string& path, const Optimizer& optimizer, const Generator& generator,
                         int64_t step, const std::map<std::string, std::string>& metadata) {
  write_file_atomically(
      path,
      serialize_training_state(
          optimizer, {.step = step, .generators = {{"state", generator.state()}}, .metadata = metadata}));
}

int64_t load_training_state(const std::string& path, Optimizer& optimizer, Generator& generator) {
  const SafetensorsFile file = load_safetensors(path);
  // Check the generator before the optimizer is changed: nothing is restored from a bad file.
  const Tensor* words = file.find("generator.state");
  if (!words || words->dtype() != DType::Int64 || words->shape() != Shape{4}) {
    throw Error("load_training_state", path + ": 'generator.state' is missing or not int64 [4]");
  }
  const TrainingState state = load_training_state(file, path, optimizer);
  generator.set_state(state.generators.at("state"));
  return state.step;
}

}  // namespace minigrad::optim

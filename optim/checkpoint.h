// Checkpoints, in the safetensors format (tensor/safetensors.h):
//
//   model weights    every parameter and buffer of a module under its dotted name,
//                    e.g. "layers.0.attention.W_q.weight": what PyTorch's load_state_dict and Hugging
//                    Face tools expect to find
//   training state   the optimizer's per-parameter state ("optimizer.param3.exp_avg", ...), the random
//                    generator's state ("generator.state") and the step number, so that training can
//                    resume exactly where it stopped
//
//   optim::save_weights(model, "model.safetensors");
//   optim::save_training_state("state.safetensors", optimizer, default_generator(), step);
//   ...
//   optim::load_weights(fresh_model, "model.safetensors");
//   int64_t step = optim::load_training_state("state.safetensors", fresh_optimizer, default_generator());
//
// Every file is written to a temporary file and renamed into place. Loading validates everything before
// changing anything, and reports every problem by name.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/nn/module.h"
#include "minigrad/optim/optimizer.h"
#include "minigrad/tensor/random.h"
#include "minigrad/tensor/safetensors.h"

namespace minigrad::optim {

void save_weights(const nn::Module& module, const std::string& path,
                  const std::map<std::string, std::string>& metadata = {});
// The bytes save_weights writes: for a checkpoint of several files saved together with
// write_folder_atomically (tensor/file_io.h).
std::string serialize_weights(const nn::Module& module,
                              const std::map<std::string, std::string>& metadata = {});

struct LoadWeightsOptions {
  // As PyTorch's load_state_dict(strict=...): true, the file must hold exactly the module's tensors;
  // false, tensors missing from the file keep their values and tensors the module lacks are skipped, both
  // reported in the result. A tensor of the wrong shape is an error either way.
  bool strict = true;
};
// What a load left out (empty after a strict one), as PyTorch's missing_keys and unexpected_keys.
struct LoadedWeights {
  std::vector<std::string> missing_keys, unexpected_keys;
};

// Copies the file's tensors into the module's parameters and buffers. Strict (the default), the file must
// hold exactly the module's tensors, with the same shapes: missing, unexpected and mis-shaped tensors are
// all listed in the error. Float tensors are converted to the module's float dtype.
//   auto left_out = optim::load_weights(model, "pretrained.safetensors", {.strict = false});
LoadedWeights load_weights(nn::Module& module, const std::string& path, LoadWeightsOptions options = {});
LoadedWeights load_weights(nn::Module& module, const SafetensorsFile& file, const std::string& source,
                           LoadWeightsOptions options = {});

void save_training_state(const std::string& path, const Optimizer& optimizer, const Generator& generator,
                         int64_t step, const std::map<std::string, std::string>& metadata = {});

// Restores the optimizer's state and the generator; returns the saved step number. The file must have
// been saved from the same kind of optimizer over parameters of the same shapes.
int64_t load_training_state(const std::string& path, Optimizer& optimizer, Generator& generator);

// The state of a training run besides its weights, for runs that keep more than one generator (dropout
// on each rank, the batch order) or need to know where in an epoch they stopped: saved as "generator.NAME"
// tensors and metadata beside the optimizer's "optimizer.*" tensors.
struct TrainingState {
  int64_t step = 0;
  std::map<std::string, Generator::State> generators{};
  std::map<std::string, std::string> metadata{};
  // Weight averages (ExponentialMovingAverage::state_tensors()), saved as "ema.NAME"; empty without.
  std::vector<std::pair<std::string, Tensor>> averages{};
};
// The bytes of a training-state file (for a checkpoint folder written with write_folder_atomically).
std::string serialize_training_state(const Optimizer& optimizer, const TrainingState& state);
// Restores the optimizer's state from `file` (read from `source`) and returns the rest; throws naming
// `source` if the file was saved by another kind of optimizer or for other parameters.
TrainingState load_training_state(const SafetensorsFile& file, const std::string& source,
                                  Optimizer& optimizer);

// The same for a model whose parameters are split between optimizers, as a row-sparse embedding table's
// SparseAdam beside the rest's AdamW: one file holds them all, optimizers[0] as above ("optimizer.*",
// metadata "optimizer" and "parameters") and optimizers[k], k > 0, as "optimizerK.*", "optimizerK" and
// "parametersK". Loading takes the same kinds of optimizer, in the same order; if any part does not fit,
// it throws and every optimizer keeps the state it had.
std::string serialize_training_state(const std::vector<const Optimizer*>& optimizers,
                                     const TrainingState& state);
TrainingState load_training_state(const SafetensorsFile& file, const std::string& source,
                                  const std::vector<Optimizer*>& optimizers);

}  // namespace minigrad::optim

// What the reference programs (examples/reference/) write for the PyTorch comparisons to load.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::reference {

// Each parameter of `module` under its name (PyTorch's, for the layers compared) and, after a backward
// pass, its gradient under "<name>.grad".
inline std::vector<std::pair<std::string, Tensor>> parameters_and_gradients(const nn::Module& module) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, p] : module.named_parameters()) {
    tensors.emplace_back(name, p.data());
    tensors.emplace_back(name + ".grad", p.grad());
  }
  return tensors;
}

}  // namespace minigrad::reference

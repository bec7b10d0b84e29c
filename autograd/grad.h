// grad(): gradients returned rather than accumulated into .grad (PyTorch's torch.autograd.grad).
#pragma once

#include <optional>
#include <vector>

#include "minigrad/autograd/variable.h"

namespace minigrad {

struct GradOptions {
  // The gradients get a graph of their own, so they can be differentiated again.
  bool create_graph = false;
  // Keep the graph for another backward through it (default: create_graph).
  std::optional<bool> retain_graph = std::nullopt;
  // Inputs the outputs do not depend on get an undefined Variable instead of an error.
  bool allow_unused = false;
};

// d(Σ_k grad_outputs[k]·outputs[k]) / d inputs[i], returned rather than accumulated into .grad.
// grad_outputs may be empty for one-element outputs (seed 1). A sparse embedding's table gets its
// gradient row-sparse, as in PyTorch (to_dense() gives the dense one).
//   Variable y = sum(x * x * x);
//   Variable dy = grad({y}, {x}, {}, {.create_graph = true})[0];  // 3x², with a graph
//   Variable d2y = grad({sum(dy)}, {x})[0];                        // 6x
std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Variable>& grad_outputs = {}, GradOptions options = {});

}  // namespace minigrad

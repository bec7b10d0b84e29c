// grad(): the engine's walk (autograd/engine.cpp), with the gradient reaching each requested input
// collected instead of accumulated into .grad.
#include "minigrad/autograd/grad.h"

#include <string>
#include <unordered_map>

#include "minigrad/autograd/engine.h"
#include "minigrad/autograd/functions.h"

namespace minigrad {

namespace {

void check_arguments(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                     const std::vector<Variable>& grad_outputs) {
  if (outputs.empty()) throw ValueError("grad", "needs at least one output");
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size()) {
    throw ValueError("grad", std::to_string(grad_outputs.size()) + " grad_outputs for " +
                                 std::to_string(outputs.size()) + " outputs");
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!grad_outputs.empty() && !grad_outputs[k].defined()) {
      throw ValueError("grad", "grad_outputs[" + std::to_string(k) + "] is undefined");
    }
    detail::check_backward_call(outputs[k], grad_outputs.empty() ? Tensor() : grad_outputs[k].data());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) {
      throw ValueError("grad", "input " + std::to_string(i) + " is undefined or does not require grad");
    }
  }
}

}  // namespace

std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Variable>& grad_outputs, GradOptions options) {
  check_arguments(outputs, inputs, grad_outputs);
  const bool retain_graph = options.retain_graph.value_or(options.create_graph);
  GradModeGuard grad_mode(options.create_graph);  // record the backward functions' ops only for create_graph

  // Where each requested input's gradient arrives: at a leaf's impl, or at the output of the node that
  // computed it (before that node runs).
  std::vector<Variable> found(inputs.size());
  std::unordered_map<const void*, std::vector<size_t>> wanted;  // leaf impl or node -> input positions
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Variable& x = inputs[i];
    wanted[x.is_leaf() ? static_cast<const void*>(x.impl().get()) : x.grad_fn().get()].push_back(i);
  }
  auto deliver = [&](const void* key, Variable g) {
    auto it = wanted.find(key);
    if (it == wanted.end()) return;
    for (size_t i : it->second) {
      const OutputPart part =
          inputs[i].impl()->part;  // a piece of unbind takes its part of the node's gradient
      detail::add_into(found[i], part.whole() ? g : select(g, part.dim, part.index));
    }
  };

  std::vector<Node*> roots;
  std::vector<Variable> seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    // 1 for a one-element output; with create_graph the caller's grad_outputs keep their own graph.
    Variable seed = grad_outputs.empty()   ? Variable(Tensor::ones(outputs[k].shape(), outputs[k].dtype()))
                    : options.create_graph ? grad_outputs[k]
                                           : Variable(grad_outputs[k].data());
    if (outputs[k].is_leaf()) {
      deliver(outputs[k].impl().get(), seed);
    } else {
      roots.push_back(outputs[k].grad_fn().get());
      seeds.push_back(detail::whole_output_gradient(*outputs[k].impl(), std::move(seed)));
    }
  }
  if (!roots.empty()) {
    detail::backpropagate(roots, std::move(seeds), retain_graph,
                          {.leaf = [&](VariableImpl& leaf, const Variable& g) { deliver(&leaf, g); },
                           .node_output = [&](const Node& node, const Variable& g) { deliver(&node, g); }});
  }
  for (size_t i = 0; i < found.size(); ++i) {
    if (!found[i].defined()) {
      if (!options.allow_unused) {
        throw ValueError("grad", "input " + std::to_string(i) +
                                     " was not used to compute the outputs (pass allow_unused = true to get "
                                     "an undefined gradient instead)");
      }
    } else if (!options.create_graph) {
      found[i] = Variable(found[i].data());  // a handle of the caller's own, without a graph
    }
  }
  return found;
}

}  // namespace minigrad

// Hooks on a module's calls, as PyTorch's register_forward_hook and register_full_backward_hook
// (nn/module_hooks.cpp): look at what a layer received and returned, or at the gradients flowing in and
// out of it, without changing the layer.
//
//   nn::Linear fc(4, 3);
//   HookHandle seen = fc.register_forward_hook(
//       [](const nn::Module&, std::span<const Variable> inputs, const Variable& output) {
//         std::cout << inputs[0].shape() << " -> " << output.shape() << "\n";
//         return Variable();  // keep the output as it is
//       });
//   HookHandle grads = fc.register_full_backward_hook(
//       [](const nn::Module&, std::span<const Variable> grad_input, std::span<const Variable> grad_output) {
//         std::cout << "d loss / d input: " << grad_input[0].shape() << "\n";
//         return std::vector<Variable>();  // keep the gradients as they are
//       });
//   sum(fc(x)).backward();  // prints both
//   seen.remove();
//
// Hooks run for every call of a module as model(x) (nn::Layer's call, nn/module.h), a module of your own
// included; a direct call of model.forward(x) skips them, as in PyTorch.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "minigrad/autograd/hooks.h"
#include "minigrad/autograd/variable.h"

namespace minigrad::nn {

class Module;

// Called when forward() returns, with the module, the Variables it was called with (its Variable
// arguments, in order: an Embedding's ids are a Tensor, so it has none) and its output. Returns a
// replacement output, or an undefined Variable to keep the output.
using ForwardHook =
    std::function<Variable(const Module& module, std::span<const Variable> inputs, const Variable& output)>;

// Called during backward, once the gradients with respect to the module's inputs are computed:
// grad_input[i] is d loss / d inputs[i] (undefined for an input that does not require grad),
// grad_output[0] is d loss / d output. Returns replacements for grad_input (as many, each of its input's
// shape; an undefined entry keeps that gradient), or an empty vector to keep them all. When no input
// requires grad, it is called as the output's gradient arrives, with every grad_input undefined, and what
// it returns is ignored. A module called twice gets a call for each.
using FullBackwardHook = std::function<std::vector<Variable>(
    const Module& module, std::span<const Variable> grad_input, std::span<const Variable> grad_output)>;

namespace detail {
// A module's hooks, in the order they were registered; the module holds none until a first hook.
struct ModuleHooks {
  const Module* module = nullptr;  // their module; null once it is destroyed
  std::vector<std::pair<uint64_t, ForwardHook>> forward;
  std::vector<std::pair<uint64_t, FullBackwardHook>> backward;
  uint64_t next_id = 1;
};
struct BackwardCall;  // what one call's backward hooks share (module_hooks.cpp)
}  // namespace detail

// One call of a module, as its hooks see it: what nn::Layer's call (nn/module.h) opens around forward()
// when the module has hooks or a RecordModuleCalls is alive. A layer never opens one itself.
//
// With a full backward hook, input(i) is an identity of input i (a node of the graph where the gradients
// with respect to the inputs are caught), and output() returns an identity of the output (where the
// gradient with respect to it is caught), as PyTorch's BackwardHook does; forward() is given input(i).
class ModuleCall {
 public:
  ModuleCall(const Module& module, std::vector<Variable> inputs);
  ModuleCall(const ModuleCall&) = delete;
  ModuleCall& operator=(const ModuleCall&) = delete;
  ~ModuleCall();

  const Variable& input(size_t i) const { return inputs_[i]; }
  std::span<const Variable> inputs() const { return inputs_; }
  // Runs the forward hooks on `output`, then sets up the backward hooks' side of it; returns the output
  // the caller gets.
  Variable output(Variable output);

 private:
  Variable run_hooks(Variable output);

  const Module& module_;
  std::vector<Variable> inputs_;
  std::shared_ptr<detail::BackwardCall> backward_;  // only with a full backward hook on the module
};

// Records this thread's module calls while it lives, innermost first (a call is recorded as it returns):
// the module boxes of the backward page (viz/page.h), or a list of what a model ran.
//
//   nn::RecordModuleCalls calls(model);
//   Variable loss = ...model(x)...;
//   for (const auto& call : calls.calls()) std::cout << call.label << "\n";  // "layers.0.linear1 (Linear)"
//
// With none alive, a module call costs one test of a thread-local pointer.
class RecordModuleCalls {
 public:
  // Calls of `root` and its descendants are labelled with their path in root's tree and their class
  // ("encoder.layers.0 (TransformerEncoderLayer)"); the root's and other modules' with their class.
  explicit RecordModuleCalls(const Module& root);
  ~RecordModuleCalls();
  RecordModuleCalls(const RecordModuleCalls&) = delete;
  RecordModuleCalls& operator=(const RecordModuleCalls&) = delete;

  struct Call {
    std::string label;
    std::vector<Variable> inputs;  // as the module's forward read them (ModuleCall::input)
    Variable output;               // as the caller got it
  };
  const std::vector<Call>& calls() const { return calls_; }

 private:
  friend class ModuleCall;
  void add(const Module& module, std::span<const Variable> inputs, const Variable& output);

  std::unordered_map<const Module*, std::string> paths_;
  std::vector<Call> calls_;
  RecordModuleCalls* previous_;
};

namespace detail {
extern constinit thread_local RecordModuleCalls* recording_module_calls;  // this thread's, or null
}  // namespace detail

}  // namespace minigrad::nn

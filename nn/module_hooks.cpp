// Module hooks (nn/module_hooks.h): where they are kept, and how a call runs them.
//
// A forward hook runs in ModuleCall::output. A full backward hook needs two gradients that the engine
// computes at different times: d loss / d output, which arrives first, and d loss / d inputs, which the
// module's own ops compute from it. As PyTorch does, the call puts an identity op on each side and a
// Variable hook (autograd/hooks.h) on each identity: the output's hook keeps the output's gradient, and the
// inputs' hook, which runs once every gradient with respect to the inputs has been summed, calls the
// module's hooks with both and lets them replace the inputs' gradients before they flow on.
#include "minigrad/nn/module_hooks.h"

#include <algorithm>
#include <string>

#include "minigrad/autograd/functions.h"
#include "minigrad/autograd/graph.h"
#include "minigrad/nn/module.h"

namespace minigrad::nn {

namespace detail {

// What one call's backward hooks share: the output's gradient, kept by the output's hook until the inputs'
// hook hands it to the module's hooks.
struct BackwardCall {
  std::shared_ptr<ModuleHooks> hooks;  // read when backward runs: a hook removed before it is not called
  size_t count = 0;                    // the call's inputs
  std::vector<size_t> caught;          // those that require grad, whose gradients are caught together
  std::vector<Variable> grad_output;   // d loss / d output in this pass, once it has arrived
};

}  // namespace detail

namespace {

// The output (or input) unchanged, recorded as an op of its own: a node where a gradient can be caught
// that belongs to this call alone (the input's own node may feed other ops too).
Variable identity(const char* op, const Variable& x) {
  return record(
      op, x.data(), {x}, [](const Variable& g, NeedsGrad) -> VariableGrads { return {g}; },
      [](const Tangents& t) { return t[0]; });
}

// Calls the module's backward hooks in order, each with the previous one's gradients; returns the last.
std::vector<Variable> run_backward_hooks(const detail::BackwardCall& call, std::vector<Variable> grad_input) {
  const Module* module = call.hooks->module;
  if (module == nullptr) {
    throw ValueError("full backward hook", "the module was destroyed before the backward pass reached it");
  }
  const std::string who = module->name() + " full backward hook";
  const auto hooks = call.hooks->backward;  // a copy: a hook may remove itself while it runs
  for (const auto& [id, hook] : hooks) {
    std::vector<Variable> replaced = hook(*module, grad_input, call.grad_output);
    if (replaced.empty()) continue;
    if (replaced.size() != grad_input.size()) {
      throw ValueError(who, "returned " + std::to_string(replaced.size()) + " gradients for a call with " +
                                std::to_string(grad_input.size()) + " inputs");
    }
    for (size_t i = 0; i < replaced.size(); ++i) {
      if (!replaced[i].defined()) continue;
      if (!grad_input[i].defined()) {
        throw ValueError(who, "returned a gradient for input " + std::to_string(i) + ", which has none");
      }
      if (replaced[i].shape() != grad_input[i].shape() || replaced[i].dtype() != grad_input[i].dtype()) {
        throw ShapeError(who, "returned a gradient of shape " + replaced[i].shape().str() + " for input " +
                                  std::to_string(i) + " of shape " + grad_input[i].shape().str());
      }
      grad_input[i] = std::move(replaced[i]);
    }
  }
  return grad_input;
}

// With one input that requires grad, its identity is where its gradient is caught.
void catch_one_input(Variable& input, const std::shared_ptr<detail::BackwardCall>& call) {
  input = identity("module_input", input);
  const size_t i = call->caught[0];
  input.register_hook([call, i](const Variable& g) {
    std::vector<Variable> grad_input(call->count);
    grad_input[i] = g;
    Variable result = run_backward_hooks(*call, std::move(grad_input))[i];
    call->grad_output.clear();
    return result;
  });
}

// With several, the hooks must see all their gradients at once, before any flows on: the inputs are
// joined into one flat Variable whose gradient holds them all, and each input is read back as a slice of
// it. This copies the inputs, but only for a call with a backward hook.
void catch_inputs_together(std::span<Variable> inputs, const std::shared_ptr<detail::BackwardCall>& call) {
  std::vector<Variable> flat;
  std::vector<Shape> shapes;
  for (const size_t i : call->caught) {
    if (inputs[i].dtype() != inputs[call->caught[0]].dtype()) {
      throw DTypeError(call->hooks->module->name() + " full backward hook",
                       "the inputs that require grad differ in dtype");
    }
    flat.push_back(reshape(inputs[i], Shape{inputs[i].numel()}));
    shapes.push_back(inputs[i].shape());
  }
  const Variable joined = concat(flat, 0);                  // (the inputs' sizes summed)
  auto piece = [shapes](const Variable& whole, size_t k) {  // the k-th caught input's part of `whole`
    int64_t start = 0;
    for (size_t j = 0; j < k; ++j) start += shapes[j].numel();
    return reshape(slice(whole, 0, start, start + shapes[k].numel()), shapes[k]);
  };
  for (size_t k = 0; k < call->caught.size(); ++k) inputs[call->caught[k]] = piece(joined, k);
  joined.register_hook([call, piece](const Variable& g) {
    std::vector<Variable> grad_input(call->count);
    for (size_t k = 0; k < call->caught.size(); ++k) grad_input[call->caught[k]] = piece(g, k);
    const std::vector<Variable> after = run_backward_hooks(*call, grad_input);
    call->grad_output.clear();
    bool replaced = false;
    std::vector<Variable> parts;
    for (const size_t i : call->caught) {
      replaced = replaced || !after[i].is_same(grad_input[i]);
      parts.push_back(reshape(after[i], Shape{after[i].numel()}));
    }
    return replaced ? concat(parts, 0) : Variable();
  });
}

}  // namespace

ModuleCall::ModuleCall(const Module& module, std::vector<Variable> inputs)
    : module_(module), inputs_(std::move(inputs)) {
  const detail::ModuleHooks* hooks = module.hooks_.get();
  if (hooks == nullptr || hooks->backward.empty() || !GradMode::is_enabled()) return;

  backward_ = std::make_shared<detail::BackwardCall>();
  backward_->hooks = module.hooks_;
  backward_->count = inputs_.size();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].defined() && inputs_[i].requires_grad()) backward_->caught.push_back(i);
  }
  if (backward_->caught.size() == 1) catch_one_input(inputs_[backward_->caught[0]], backward_);
  if (backward_->caught.size() > 1) catch_inputs_together(inputs_, backward_);
}

ModuleCall::~ModuleCall() = default;

Variable ModuleCall::output(Variable output) {
  if (module_.hooks_) output = run_hooks(std::move(output));
  if (RecordModuleCalls* recording = detail::recording_module_calls)
    recording->add(module_, inputs(), output);
  return output;
}

Variable ModuleCall::run_hooks(Variable output) {
  const detail::ModuleHooks* hooks = module_.hooks_.get();
  const auto forward_hooks = hooks->forward;  // a copy: a hook may remove itself while it runs
  for (const auto& [id, hook] : forward_hooks) {
    Variable replaced = hook(module_, inputs(), output);
    if (replaced.defined()) output = std::move(replaced);
  }
  if (!backward_ || !output.defined() || !output.requires_grad()) return output;
  output = identity("module_output", output);
  output.register_hook([call = backward_](const Variable& g) {
    call->grad_output = {g};
    if (call->caught.empty()) {  // no input gradient will come: the hooks run now
      run_backward_hooks(*call, std::vector<Variable>(call->count));
      call->grad_output.clear();
    }
    return Variable();
  });
  return output;
}

// ---- recording the calls ----

namespace detail {
constinit thread_local RecordModuleCalls* recording_module_calls = nullptr;
}  // namespace detail

RecordModuleCalls::RecordModuleCalls(const Module& root) : previous_(detail::recording_module_calls) {
  for (const auto& [path, module] : root.named_modules()) paths_.emplace(module, path);
  detail::recording_module_calls = this;
}

RecordModuleCalls::~RecordModuleCalls() {
  detail::recording_module_calls = previous_;
}

void RecordModuleCalls::add(const Module& module, std::span<const Variable> inputs, const Variable& output) {
  const auto path = paths_.find(&module);
  const bool named = path != paths_.end() && !path->second.empty();
  calls_.push_back({.label = named ? path->second + " (" + module.name() + ")" : module.name(),
                    .inputs = {inputs.begin(), inputs.end()},
                    .output = output});
}

}  // namespace minigrad::nn

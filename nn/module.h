// Module: the base of every layer, as in PyTorch. A module owns named parameters (Variables that
// require grad), named buffers (state that is saved with the model but not trained, like the table of
// positional encodings) and named child modules; the names form dotted paths over the whole tree:
//
//   encoder.blks.0.attention.W_q.weight
//
// A layer registers its pieces in its constructor and keeps handles to them as members:
//
//   Linear::Linear(...) {
//     weight = register_parameter("weight", Tensor::uniform({out, in}, -k, k));
//   }
//   Block::Block(...) { ffn = register_module("ffn", std::make_shared<PositionWiseFFN>(...)); }
//
// Each module has its own forward() with the arguments it needs (no virtual forward, as in PyTorch's C++
// frontend). Printing a module shows its tree, like PyTorch's repr.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/autograd/grad_mode.h"
#include "minigrad/autograd/hooks.h"
#include "minigrad/autograd/variable.h"
#include "minigrad/nn/module_hooks.h"

namespace minigrad::nn {

class Module {
 public:
  virtual ~Module();
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The class name shown when printing ("Linear").
  virtual std::string name() const = 0;
  // The part inside the parentheses when printing, e.g. "in_features=100, out_features=100, bias=False".
  virtual std::string extra_repr() const { return ""; }

  // Parameters of this module and all its descendants, with dotted names, in registration order.
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  std::vector<Variable> parameters() const;
  // Buffers of this module and all its descendants, with dotted names.
  std::vector<std::pair<std::string, Variable>> named_buffers() const;
  // This module ("") and all its descendants, with dotted paths, parents before children.
  std::vector<std::pair<std::string, const Module*>> named_modules() const;
  // Direct children, in registration order.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const { return children_; }

  // Training mode (dropout active) or evaluation mode, for this module and all descendants.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Forgets every parameter's gradient.
  void zero_grad();
  // The number of scalar parameters.
  int64_t parameter_count() const;
  // Converts every parameter and buffer to `dtype` in place (float64 for gradient checks).
  void to(DType dtype);

  // The module tree, as PyTorch prints it.
  std::string repr() const;

  // Hooks on this module's calls (nn/module_hooks.h), each taken off by the handle's remove().
  // A forward hook sees each call's inputs and output and may replace the output.
  HookHandle register_forward_hook(ForwardHook hook);
  // A full backward hook sees the gradients with respect to each call's inputs and output during backward,
  // and may replace the inputs' gradients. The module must outlive the backward passes it hooks.
  HookHandle register_full_backward_hook(FullBackwardHook hook);

  // A trainable tensor: a leaf Variable that requires grad.
  Variable register_parameter(std::string name, Tensor value);
  // Saved with the model, not trained (its Variable does not require grad).
  Variable register_buffer(std::string name, Tensor value);
  // A child module; its parameters appear under "name.".
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }

 protected:
  // Called by to(dtype) on this module after its parameters and buffers were converted: a module whose
  // buffer is computed (a table of sinusoids) recomputes it in the new dtype instead of widening it.
  virtual void after_conversion(DType) {}

 private:
  void add_child(std::string name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name) const;
  template <typename Visit>
  void visit(const std::string& prefix, Visit&& visit_module) const;

  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, Variable>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  friend class ModuleCall;
  std::shared_ptr<detail::ModuleHooks> hooks_;  // none until a first hook is registered
};

std::ostream& operator<<(std::ostream& os, const Module& module);

// The parameters of several modules, in order (Python's chain(a.parameters(), b.parameters())):
//   optim::Adam optimizer(nn::parameters_of({&encoder, &head}), {.lr = 1e-3});
std::vector<Variable> parameters_of(std::initializer_list<const Module*> modules);
// The same with each module's names under a prefix of its own, for optimizers whose saved state goes by
// name: named_parameters_of({{"encoder", &encoder}, {"head", &head}}) gives "encoder.…", "head.weight", ...
std::vector<std::pair<std::string, Variable>> named_parameters_of(
    std::initializer_list<std::pair<std::string, const Module*>> modules);

}  // namespace minigrad::nn

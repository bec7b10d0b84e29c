// ModuleList and Sequential: containers of child modules named "0", "1", ..., as PyTorch numbers them.
//
//   auto mlp = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(2, 16),
//                                               std::make_shared<nn::ReLU>(),
//                                               std::make_shared<nn::Linear>(16, 2));
//   Variable logits = (*mlp)(x);  // (batch, 2) -> (batch, 16) -> (batch, 16) -> (batch, 2)
//   std::cout << *mlp;                  // Sequential(\n  (0): Linear(in_features=2, ...) ...
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "minigrad/nn/module.h"

namespace minigrad::nn {

// Child modules named "0", "1", ...: for stacks of layers that the owner calls itself, as PyTorch's
// nn.ModuleList (which is not called itself).
//
//   layers->push_back(std::make_shared<EncoderLayer>(options));
//   for (size_t i = 0; i < layers->size(); ++i) x = layers->at<EncoderLayer>(i)(x);
class ModuleList : public Module {
 public:
  template <typename M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> module) {
    return register_module(std::to_string(children().size()), std::move(module));
  }
  // Module i as the M it is, as PyTorch's ModuleList::at<T>; throws if there is no module i or it is not
  // an M.
  template <typename M>
  M& at(size_t i) const {
    if (M* module = i < size() ? dynamic_cast<M*>(children()[i].second.get()) : nullptr) return *module;
    throw_not_found(i);
  }
  size_t size() const { return children().size(); }
  std::string name() const override { return "ModuleList"; }

 private:
  [[noreturn]] void throw_not_found(size_t i) const;
};

// A function as a module, for a Sequential: PyTorch C++'s nn::Functional (Python puts a lambda module or
// nn.ReLU there). It has no parameters and prints as the name given.
//   nn::Sequential model(std::make_shared<nn::Linear>(2, 8), nn::Functional(relu),
//                        std::make_shared<nn::Linear>(8, 1));
class Functional : public Layer<Functional> {
 public:
  // A function of one Variable (an overloaded name such as relu picks its Variable overload here).
  Functional(Variable (*function)(const Variable&), std::string name = "Functional")  // NOLINT: as PyTorch's
      : function_(function), name_(std::move(name)) {}
  // Any other callable (a lambda that captures, a std::function).
  template <typename F>
  requires(!std::is_convertible_v<F, Variable (*)(const Variable&)> &&
           std::is_invocable_r_v<Variable, const F&, const Variable&>)
      Functional(F function, std::string name = "Functional")  // NOLINT
      : function_(std::move(function)), name_(std::move(name)) {}
  Variable forward(const Variable& x) const { return function_(x); }
  std::string name() const override { return name_; }
  const std::function<Variable(const Variable&)>& function() const { return function_; }

 private:
  std::function<Variable(const Variable&)> function_;
  std::string name_;
};

// Modules applied one after the other, each to the previous one's output, as PyTorch's nn.Sequential.
// A module can join if it is called as module(x) on one Variable and returns one.
class Sequential : public Layer<Sequential> {
 public:
  Sequential() = default;
  // Modules (std::make_shared<nn::Linear>(2, 8)) and functions (nn::Functional(relu)), in order.
  template <typename... M>
  explicit Sequential(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  void push_back(const Functional& f) { push_back(std::make_shared<Functional>(f.function(), f.name())); }

  template <typename M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> module) {
    static_assert(std::is_same_v<std::invoke_result_t<const M&, const Variable&>, Variable>,
                  "a module in a Sequential is an nn::Layer with Variable forward(const Variable&) const");
    if (!module) throw ValueError("Sequential", "cannot add a null module");
    steps_.push_back([m = module.get()](const Variable& x) { return (*m)(x); });
    return register_module(std::to_string(steps_.size() - 1), std::move(module));
  }

  // x through every module in order; with no modules, x itself.
  Variable forward(const Variable& x) const;
  size_t size() const { return steps_.size(); }
  std::string name() const override { return "Sequential"; }

 private:
  std::vector<std::function<Variable(const Variable&)>> steps_;  // each child's forward, in order
};

}  // namespace minigrad::nn

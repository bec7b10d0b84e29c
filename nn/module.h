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
// frontend), and is called as model(x): its class derives from Layer<ItsClass> (below), whose call runs
// the module's hooks around forward(), as PyTorch's Module.__call__ does. Printing a module shows its
// tree, like PyTorch's repr.
#pragma once

#include <array>
#include <iosfwd>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "minigrad/autograd/grad_mode.h"
#include "minigrad/autograd/hooks.h"
#include "minigrad/autograd/variable.h"
#include "minigrad/nn/constructor_lines.h"
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

  // Forgets every parameter's gradient, or zeroes it in place (Variable::zero_grad).
  void zero_grad(bool set_to_none = true);
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

  // A module is called through Layer<Derived>'s call; this one stands in for it, so that a class derived
  // from Module alone fails to compile at the call with a message that says what to write.
  template <typename... Args>
  void operator()(Args&&...) const {
    static_assert(sizeof...(Args) > 1000,
                  "to call a module as model(x), derive its class from nn::Layer<ItsClass> (nn/module.h), "
                  "not from nn::Module");
  }

 protected:
  // Called by to(dtype) on this module after its parameters and buffers were converted: a module whose
  // buffer is computed (a table of sinusoids) recomputes it in the new dtype instead of widening it.
  virtual void after_conversion(DType) {}

  // Whether a call must open a ModuleCall: the module has hooks, or this thread records module calls.
  bool call_is_watched() const { return hooks_ != nullptr || detail::recording_module_calls != nullptr; }

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

namespace detail {

template <typename T>
constexpr bool is_variable = std::is_same_v<std::remove_cvref_t<T>, Variable>;

// How many of the first I arguments are Variables: argument I's index among the call's inputs.
template <size_t I, typename... Args>
constexpr size_t variables_before() {
  constexpr std::array<bool, sizeof...(Args)> is_input{is_variable<Args>...};
  size_t count = 0;
  for (size_t j = 0; j < I; ++j) count += is_input[j] ? 1 : 0;
  return count;
}

// Argument I as forward() is given it: a Variable as the call's input (an identity where a full backward
// hook catches its gradient), anything else as it came.
template <size_t I, typename... Args, typename Arg>
decltype(auto) as_given(const ModuleCall& call, Arg&& arg) {
  if constexpr (is_variable<Arg>) {
    return call.input(variables_before<I, Args...>());
  } else {
    return std::forward<Arg>(arg);
  }
}

template <typename... Args, typename M, typename Tuple, size_t... I>
auto forward_through(const M& module, const ModuleCall& call, Tuple&& args, std::index_sequence<I...>) {
  return module.forward(as_given<I, Args...>(call, std::get<I>(std::forward<Tuple>(args)))...);
}

// A call with hooks to run or a recording to add to: the Variable arguments are the call's inputs, and
// the Variable forward() returns (or the Variable `output` member of what it returns, as RecurrentOutput's)
// is its output.
template <typename M, typename... Args>
auto watched_call(const M& module, Args&&... args) {
  std::vector<Variable> inputs;
  inputs.reserve(sizeof...(Args));
  auto add_input = [&inputs](const auto& arg) {
    if constexpr (is_variable<decltype(arg)>) inputs.push_back(arg);
  };
  (add_input(args), ...);
  ModuleCall call(module, std::move(inputs));
  auto result = forward_through<Args...>(module, call, std::forward_as_tuple(std::forward<Args>(args)...),
                                         std::index_sequence_for<Args...>{});
  if constexpr (std::is_same_v<decltype(result), Variable>) {
    return call.output(std::move(result));
  } else if constexpr (requires { requires std::is_same_v<decltype(result.output), Variable>; }) {
    result.output = call.output(std::move(result.output));
    return result;
  } else {  // no Variable to hook: the hooks see an undefined output
    call.output(Variable());
    return result;
  }
}

// forward()'s parameter types, read from its member pointer: a module has one forward(), a const one.
template <typename F>
struct ForwardParameters {
  static_assert(sizeof(F) == 0,
                "a module has one forward(), a const member function: Variable forward(...) const");
};
template <typename R, typename C, typename... P>
struct ForwardParameters<R (C::*)(P...) const> {
  using type = std::tuple<P...>;
};
template <typename R, typename C, typename... P>
struct ForwardParameters<R (C::*)(P...) const noexcept> {
  using type = std::tuple<P...>;
};

// Past forward()'s last parameter: no argument converts to it, so a call with too many arguments matches
// no overload.
struct NoParameter {
  NoParameter() = delete;
};
template <size_t K, typename Parameters>
struct ParameterAt {
  using type = NoParameter;
};
template <size_t K, typename Parameters>
requires(K < std::tuple_size_v<Parameters>) struct ParameterAt<K, Parameters> {
  using type = std::tuple_element_t<K, Parameters>;
};

// The type of M::forward()'s parameter K, and what forward() returns for arguments of types Args.
template <typename M, size_t K>
using Parameter = typename ParameterAt<K, typename ForwardParameters<decltype(&M::forward)>::type>::type;
template <typename M, typename... Args>
using ForwardResult = decltype(std::declval<const M&>().forward(std::declval<Args>()...));

}  // namespace detail

// What a module's class derives from to be called as model(x), as a PyTorch module is: the call runs
// Derived::forward(x) with the module's hooks around it (nn/module_hooks.h) and the module's box on the
// backward page. A layer writes only forward():
//
//   class Residual : public nn::Layer<Residual> {
//    public:
//     Variable forward(const Variable& x) const { return x + (*fc)(x); }
//     ...
//   };
//   Variable y = block(x);  // hooks, if any, see x and y
//
// The call's inputs are its Variable arguments (a Tensor of ids, an option or a mask is passed on as it
// is); calling forward() directly skips the hooks, as in PyTorch. A module has one forward(), const, with
// at most five parameters.
template <typename Derived>
class Layer : public Module {
  // M is Derived, a template parameter of each call so that forward() is looked up at the call, when
  // Derived is complete; P<M, K> is the type of forward()'s parameter K.
  template <typename M, size_t K>
  using P = detail::Parameter<M, K>;

 public:
  // model(a, b, ...): one overload for each number of arguments, each taking forward()'s own parameter
  // types, so that a braced argument ({.valid_lens = lens}) and forward()'s defaults work as in a direct
  // call of forward().
  template <typename M = Derived>
  auto operator()() const -> detail::ForwardResult<M> {
    return call<M>();
  }
  template <typename M = Derived>
  auto operator()(P<M, 0> a) const -> detail::ForwardResult<M, P<M, 0>> {
    return call<M>(std::forward<P<M, 0>>(a));
  }
  template <typename M = Derived>
  auto operator()(P<M, 0> a, P<M, 1> b) const -> detail::ForwardResult<M, P<M, 0>, P<M, 1>> {
    return call<M>(std::forward<P<M, 0>>(a), std::forward<P<M, 1>>(b));
  }
  template <typename M = Derived>
  auto operator()(P<M, 0> a, P<M, 1> b, P<M, 2> c) const
      -> detail::ForwardResult<M, P<M, 0>, P<M, 1>, P<M, 2>> {
    return call<M>(std::forward<P<M, 0>>(a), std::forward<P<M, 1>>(b), std::forward<P<M, 2>>(c));
  }
  template <typename M = Derived>
  auto operator()(P<M, 0> a, P<M, 1> b, P<M, 2> c, P<M, 3> d) const
      -> detail::ForwardResult<M, P<M, 0>, P<M, 1>, P<M, 2>, P<M, 3>> {
    return call<M>(std::forward<P<M, 0>>(a), std::forward<P<M, 1>>(b), std::forward<P<M, 2>>(c),
                   std::forward<P<M, 3>>(d));
  }
  template <typename M = Derived>
  auto operator()(P<M, 0> a, P<M, 1> b, P<M, 2> c, P<M, 3> d, P<M, 4> e) const
      -> detail::ForwardResult<M, P<M, 0>, P<M, 1>, P<M, 2>, P<M, 3>, P<M, 4>> {
    return call<M>(std::forward<P<M, 0>>(a), std::forward<P<M, 1>>(b), std::forward<P<M, 2>>(c),
                   std::forward<P<M, 3>>(d), std::forward<P<M, 4>>(e));
  }

 private:
  // The one door: forward() alone when nothing watches this call (no hooks, no recording), else forward()
  // inside a ModuleCall.
  template <typename M, typename... Args>
  auto call(Args&&... args) const {
    const M& self = static_cast<const M&>(*this);
    if (!call_is_watched()) return self.forward(std::forward<Args>(args)...);
    return detail::watched_call(self, std::forward<Args>(args)...);
  }
};

// The parameters of several modules, in order (Python's chain(a.parameters(), b.parameters())):
//   optim::Adam optimizer(nn::parameters_of({&encoder, &head}), {.lr = 1e-3});
std::vector<Variable> parameters_of(std::initializer_list<const Module*> modules);
// The same with each module's names under a prefix of its own, for optimizers whose saved state goes by
// name: named_parameters_of({{"encoder", &encoder}, {"head", &head}}) gives "encoder.…", "head.weight", ...
std::vector<std::pair<std::string, Variable>> named_parameters_of(
    std::initializer_list<std::pair<std::string, const Module*>> modules);

}  // namespace minigrad::nn

// Variable: a tensor that takes part in reverse-mode automatic differentiation.
//
// Every differentiable op (autograd/functions.h) computes its result with the tensor layer and, when
// grad mode is on and an input requires grad, records a Node: the op's name, where its inputs' gradients
// go (Edges) and a backward function written right under the forward code. backward() then walks those
// nodes from the output back to the leaves:
//
//   Variable w(Tensor::normal({3, 2}, 0, 1, DType::Float64), /*requires_grad=*/true);
//   Variable x(Tensor::ones({4, 3}, DType::Float64));
//   Variable loss = mean(relu(matmul(x, w)));
//   loss.backward();
//   std::cout << w.grad();   // d loss / d w, shape [3,2]
//
// Like a Tensor, a Variable is a handle: copies refer to the same value, gradient and graph.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tensor/tensor.h"

namespace minigrad {

struct Node;

// What a Variable handle points at.
struct VariableImpl {
  Tensor data;
  Tensor grad;                    // accumulated d(output)/d(this); leaves only
  std::shared_ptr<Node> grad_fn;  // the op that produced this value; null for leaves
  bool requires_grad = false;
  std::string name;  // optional, shown in graph exports
  // The gradient with the graph of its own computation, set by backward({.create_graph = true}).
  std::shared_ptr<VariableImpl> grad_with_graph;
};

struct BackwardOptions {
  // Keep the graph (and the tensors saved for backward) so that backward can run through it again.
  bool retain_graph = false;
  // Compute the gradients with differentiable ops, so that they are Variables with a graph of their
  // own and can be differentiated again (Hessian-vector products, gradient penalties). Implies
  // retain_graph, as in PyTorch.
  bool create_graph = false;
};

class Variable {
 public:
  Variable() = default;
  // A leaf. Only float tensors can require grad.
  explicit Variable(Tensor data, bool requires_grad = false);
  // Another handle on an existing value (what the engine and SavedTensor use).
  explicit Variable(std::shared_ptr<VariableImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Tensor& data() const;
  // Replaces a leaf's value (every handle on this Variable sees it), e.g. to change a parameter's dtype.
  // Its gradient is dropped.
  void set_data(Tensor data) const;
  // The gradient accumulated by backward() calls since the last zero_grad(); undefined before any.
  const Tensor& grad() const;
  // The same gradient as a Variable. After backward({.create_graph = true}) it carries the graph that
  // computed it, so it can be differentiated again; otherwise it is a constant.
  Variable grad_variable() const;
  // Replaces the gradient (optimizers and tests; leaves only).
  void set_grad(Tensor grad) const;
  // Forgets the gradient (PyTorch's zero_grad(set_to_none=True)): the next backward starts afresh.
  void zero_grad() const;

  bool requires_grad() const;
  // Marks a leaf as a parameter to differentiate with respect to.
  const Variable& set_requires_grad(bool requires_grad = true) const;
  // True for values created directly rather than computed by a recorded op.
  bool is_leaf() const;
  const std::shared_ptr<Node>& grad_fn() const;

  const std::string& name() const;
  const Variable& set_name(std::string name) const;

  const Shape& shape() const { return data().shape(); }
  DType dtype() const { return data().dtype(); }
  int rank() const { return data().rank(); }
  int64_t numel() const { return data().numel(); }
  int64_t size(int64_t dim) const { return data().size(dim); }
  double item() const { return data().item(); }

  // The same data as a new leaf that does not require grad: gradients stop here.
  Variable detach() const;

  // Back-propagates from this value. Without `grad`, the value must hold one element and the seed is 1.
  void backward(BackwardOptions options = {}) const;
  void backward(const Tensor& grad, BackwardOptions options = {}) const;

  // Two handles on the same value.
  bool is_same(const Variable& other) const { return impl_ == other.impl_; }
  const std::shared_ptr<VariableImpl>& impl() const { return impl_; }

 private:
  void check_defined(std::string_view op) const;
  std::shared_ptr<VariableImpl> impl_;
};

// ---------------------------------------------------------------------------------------------------
// The graph

// Where the gradient for one input of a node goes: to the node that computed the input, or, for a leaf
// that requires grad, into the leaf's .grad. An input that needs no gradient has neither. Edges do not
// hold the inputs' values, so intermediate results not saved for backward are freed as soon as the
// program drops them.
struct Edge {
  std::shared_ptr<Node> node;
  std::shared_ptr<VariableImpl> leaf;
  Shape shape;  // the input's shape: backward checks each gradient against it
  DType dtype = DType::Float32;
  bool needs_grad() const { return node || leaf; }
};

// Which inputs of a node want a gradient: needs[i] is true when input i requires grad. A backward
// function can skip the work for the others (and return an undefined gradient for them).
class NeedsGrad {
 public:
  explicit NeedsGrad(const Node& node) : node_(&node) {}
  bool operator[](size_t input) const;
  // The node being differentiated; SavedTensor::output_variable needs it.
  const Node& node() const { return *node_; }

 private:
  const Node* node_;
};

using Grads = std::vector<Tensor>;
using VariableGrads = std::vector<Variable>;

// One recorded op: its name, its inputs' edges, and its backward function(s). A node has one output.
// The backward functions live in NodeWith<...> below; Node is what the engine sees.
struct Node : std::enable_shared_from_this<Node> {
  const char* op = "";
  std::vector<Edge> inputs;
  Shape output_shape;
  DType output_dtype = DType::Float32;

  // Maps d(loss)/d(output) to d(loss)/d(input) for each input, in input order; an undefined tensor
  // for an input that gets no gradient. The fast first-order path, on plain tensors.
  virtual Grads backward(const Tensor& grad_output, NeedsGrad needs) const = 0;
  // The same, written with differentiable ops on Variables, so the gradients have a graph of their own
  // (backward with create_graph). Ops without one throw.
  virtual VariableGrads differentiable_backward(const Variable& grad_output, NeedsGrad needs) const = 0;
  // Frees what backward needed: the backward functions and the tensors they saved. The edges stay, so
  // the graph's shape can still be printed, and a second backward through it finds it freed and says so.
  virtual void release() = 0;
  virtual bool released() const = 0;

  virtual ~Node();
};

// ---------------------------------------------------------------------------------------------------
// Grad mode

// Whether ops record graph nodes on this thread. On by default.
class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Sets grad mode on this thread for the guard's lifetime (the engine turns it on for create_graph).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~GradModeGuard() { GradMode::set_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// Turns recording off on this thread for the guard's lifetime (evaluation, optimizer updates):
//   { NoGradGuard no_grad; auto prediction = model.forward(x); }
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

// ---------------------------------------------------------------------------------------------------
// Anomaly mode

// Whether ops check their results for NaN and infinity on this thread. Off by default; when off, the
// cost is one thread-local bool test per op.
class AnomalyMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Thrown in anomaly mode when an op's forward or backward produces a NaN or an infinity.
class AnomalyError : public Error {
  using Error::Error;
};

// Turns anomaly detection on for the guard's lifetime (PyTorch's detect_anomaly): any op whose forward
// or backward produces a NaN or infinity throws an AnomalyError naming the op and the chain of ops that
// produced its input.
//   { DetectAnomalyGuard anomaly; loss = model(x); loss.backward(); }
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : previous_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(previous_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

// ---------------------------------------------------------------------------------------------------
// Saving tensors for backward: the one capture rule
//
// Every tensor a backward function keeps is captured through a SavedTensor; nothing else is captured
// but shapes, dtypes and numbers. A SavedTensor remembers the storage's version, so backward throws
// ModifiedInPlaceError instead of returning a silently wrong gradient if the tensor was modified in
// place after the forward; and, for an input, it keeps the input's place in the graph, so that a
// differentiable backward can use the input as a Variable.
//
// An operand's data is kept only if a gradient needs it (as Flashlight does): for a·b, a is saved only
// if b requires grad, because only d/db = a uses it. save_if(a, b.requires_grad()) says exactly that.

// Thrown when backward finds that a tensor it saved was modified in place after it was saved.
class ModifiedInPlaceError : public Error {
  using Error::Error;
};

class SavedTensor {
 public:
  SavedTensor() = default;
  // A constant (ids, targets, masks) or the op's own output.
  explicit SavedTensor(Tensor tensor)
      : tensor_(std::move(tensor)), version_(tensor_.defined() ? tensor_.version() : 0) {}
  // An input: its data, and, if it requires grad, its place in the graph.
  explicit SavedTensor(const Variable& input) : SavedTensor(input.data()) {
    if (input.requires_grad()) input_ = input.impl();
  }

  bool defined() const { return tensor_.defined(); }
  // The tensor; throws ModifiedInPlaceError if it was modified in place since it was saved.
  const Tensor& get() const;
  // A saved input as a Variable connected to its graph (a constant if it did not require grad).
  Variable variable() const;
  // The op's saved output as a Variable computed by `needs.node()` (PyTorch's saved outputs do the same).
  Variable output_variable(NeedsGrad needs) const;
  // output_variable() for a differentiable backward, get() for a Tensor one.
  template <typename G>
  G output_as(NeedsGrad needs) const {
    if constexpr (std::is_same_v<G, Tensor>) {
      return get();
    } else {
      return output_variable(needs);
    }
  }
  // get() for a Tensor backward, variable() for a differentiable one: what a generic backward uses.
  template <typename G>
  G as() const {
    if constexpr (std::is_same_v<G, Tensor>) {
      return get();
    } else {
      return variable();
    }
  }

 private:
  Tensor tensor_;
  uint64_t version_ = 0;
  std::shared_ptr<VariableImpl> input_;
};

// Saves `input` only when `needed` (usually: another input requires grad); undefined otherwise.
inline SavedTensor save_if(const Variable& input, bool needed) {
  return needed ? SavedTensor(input) : SavedTensor();
}

// ---------------------------------------------------------------------------------------------------
// Recording ops: how every differentiable op (minigrad's and yours) builds the graph
//
// An op computes its result with the tensor layer and hands it to record() together with its inputs
// and its backward function, written right under it (see README "Writing an op"). When the gradient's
// formula reads the same on Tensors and on Variables, one generic lambda serves both passes:
//
//   Variable square(const Variable& x) {
//     return record("square", mul(x.data(), x.data()), {x},
//                   [sx = SavedTensor(x)]<typename G>(const G& g, NeedsGrad) {
//                     return GradsOf<G>{mul(mul(g, sx.as<G>()), 2.0)};  // d(x²)/dx = 2x
//                   });
//   }
//
// With G = Tensor it is the fast first-order path of every ordinary backward(); with G = Variable it is
// written in differentiable ops, and backward({.create_graph = true}) and grad() use it to give the
// gradient a graph of its own. Where the fast path is a fused kernel, give the two separately:
//   record(op, y, inputs, Backward{[...](const Tensor& g, NeedsGrad) -> Grads {...},
//                                  [...](const Variable& g, NeedsGrad) -> VariableGrads {...}});
// A lambda taking only `const Tensor&` is a first-order backward: differentiating it again throws.

template <typename G>
using GradsOf = std::vector<G>;

// Both backward functions of an op: one on Tensors, one on Variables.
template <typename First, typename Differentiable>
struct Backward {
  First first_order;
  Differentiable differentiable;
};
template <typename First, typename Differentiable>
Backward(First, Differentiable) -> Backward<First, Differentiable>;

namespace detail {

bool any_requires_grad(std::span<const Variable> inputs);
// Fills in a new node's name and edges and returns the op's output Variable, computed by that node.
Variable connect(std::shared_ptr<Node> node, const char* op, Tensor output, std::span<const Variable> inputs);
[[noreturn]] void throw_no_differentiable_backward(const char* op);
void check_forward_anomaly(const char* op, const Tensor& output, std::span<const Variable> inputs);

template <typename F>
struct IsBackwardPair : std::false_type {};
template <typename A, typename B>
struct IsBackwardPair<Backward<A, B>> : std::true_type {};

// A Node holding its op's backward function(s) by value: one allocation per recorded op.
template <typename F>
struct NodeWith final : Node {
  explicit NodeWith(F f) : fn(std::move(f)) {}
  // Chosen at compile time by the type of the op's backward: a Backward pair runs its first_order half
  // on Tensors (first order) or its differentiable half on Variables (create_graph); a generic lambda
  // (<typename G>) is one body called with G = Tensor or G = Variable; a lambda taking only Tensors
  // has no differentiable form, and create_graph through it throws naming the op.
  Grads backward(const Tensor& g, NeedsGrad needs) const override {
    if constexpr (IsBackwardPair<F>::value) {
      return fn->first_order(g, needs);
    } else {
      return (*fn)(g, needs);
    }
  }
  VariableGrads differentiable_backward(const Variable& g, NeedsGrad needs) const override {
    if constexpr (IsBackwardPair<F>::value) {
      return fn->differentiable(g, needs);
    } else if constexpr (std::is_invocable_v<const F&, const Variable&, NeedsGrad>) {
      return (*fn)(g, needs);
    } else {
      throw_no_differentiable_backward(op);
    }
  }
  void release() override { fn.reset(); }
  bool released() const override { return !fn.has_value(); }
  std::optional<F> fn;
};

}  // namespace detail

// Wraps an op's result. If grad mode is on and an input requires grad, the result gets a Node holding
// the backward function(s); otherwise it is a plain leaf and they are dropped unused.
template <typename F>
Variable record(const char* op, Tensor output, std::span<const Variable> inputs, F backward) {
  if (AnomalyMode::is_enabled()) detail::check_forward_anomaly(op, output, inputs);
  if (!GradMode::is_enabled() || !detail::any_requires_grad(inputs)) return Variable(std::move(output));
  auto node = std::make_shared<detail::NodeWith<F>>(std::move(backward));
  return detail::connect(std::move(node), op, std::move(output), inputs);
}
template <typename F>
Variable record(const char* op, Tensor output, std::initializer_list<Variable> inputs, F backward) {
  return record(op, std::move(output), std::span<const Variable>(inputs.begin(), inputs.size()),
                std::move(backward));
}

// ---------------------------------------------------------------------------------------------------
// Running backward

// The engine behind Variable::backward: seeds `root` with `grad` (undefined: 1) and accumulates into
// the leaves' .grad.
void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options);

struct GradOptions {
  // The gradients get a graph of their own, so they can be differentiated again.
  bool create_graph = false;
  // Keep the graph for another backward through it (default: create_graph).
  std::optional<bool> retain_graph = std::nullopt;
  // Inputs the outputs do not depend on get an undefined Variable instead of an error.
  bool allow_unused = false;
};

// d(Σ_k grad_outputs[k]·outputs[k]) / d inputs[i], returned rather than accumulated into .grad
// (PyTorch's torch.autograd.grad). grad_outputs may be empty for one-element outputs (seed 1).
//   Variable y = sum(x * x * x);
//   Variable dy = grad({y}, {x}, {}, {.create_graph = true})[0];  // 3x², with a graph
//   Variable d2y = grad({sum(dy)}, {x})[0];                        // 6x
std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Variable>& grad_outputs = {}, GradOptions options = {});

}  // namespace minigrad

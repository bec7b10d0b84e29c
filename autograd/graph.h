// The graph that ops record and backward() walks: Nodes (one per recorded op), the Edges from a node to
// where its inputs' gradients go, the tensors a backward function saves, and record(), the one way an op
// (minigrad's or yours) adds itself to the graph.
//
// An op computes its result with the tensor layer and hands it to record() with its inputs and its
// backward function, written right under the forward code (docs/writing-an-op.md):
//
//   Variable square(const Variable& x) {
//     return record("square", mul(x.data(), x.data()), {x},
//                   [sx = SavedTensor(x)](const Variable& g, NeedsGrad) -> VariableGrads {
//                     return {mul(mul(g, sx.variable()), 2.0)};  // d(x²)/dx = 2x
//                   },
//                   [&](const Tangents& t) { return mul(mul(t[0], x), 2.0); });  // (x²)˙ = 2x·ẋ
//   }
//
// The backward function maps the gradient of the output, g, to one gradient per input, written with
// differentiable ops on Variables. An ordinary backward() calls it with grad mode off, so those ops just
// compute; backward({.create_graph = true}) calls it with grad mode on, so they record a graph of their
// own and the gradient can be differentiated again. The derivative is written once, for both. The last
// argument, the op's tangent rule, is forward mode's J·ẋ (autograd/forward_ad.h); without it, forward mode
// takes the op's tangent through its backward function, correct but slower.
//
// Where a fused kernel pays, the backward calls a named backward op (relu_backward, softmax_backward,
// ... in autograd/functions.h), itself an op with a derivative of its own. A lambda that takes a
// `const Tensor&` and returns Grads is a first-order-only backward: differentiating it again throws.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "minigrad/autograd/forward_ad.h"
#include "minigrad/autograd/grad_mode.h"
#include "minigrad/autograd/variable.h"

namespace minigrad {

// Where the gradient for one input of a node goes: to the node that computed the input, or, for a leaf
// that requires grad, into the leaf's .grad. An input that needs no gradient has neither. An edge to a
// node does not hold that node's output, so intermediate results not saved for backward are freed as
// soon as the program drops them; an edge to a leaf holds the leaf (a parameter), where its gradient goes.
struct Edge {
  std::shared_ptr<Node> node;
  std::shared_ptr<VariableImpl> leaf;
  Shape shape;  // the input's shape: backward checks each gradient against it
  DType dtype = DType::Float32;
  OutputPart part;  // the input is this part of node's output (unbind's pieces); usually the whole
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

using VariableGrads = std::vector<Variable>;  // what a backward function returns: one per input
using Grads = std::vector<Tensor>;            // the same, from a first-order-only backward on Tensors

namespace detail {
// The hooks registered on a Variable (autograd/hooks.h): on a leaf's, or on the node that computed a
// non-leaf, each for the part of the node's output that Variable is.
struct Hook {
  uint64_t id;
  OutputPart part;
  GradHook fn;
  bool runs_last = false;  // retain_grad's keeping, after every other hook
};
struct HookList {
  std::vector<Hook> hooks;
  uint64_t next_id = 1;
};
}  // namespace detail

// One recorded op: its name, its inputs' edges, and its backward function. A node has one output
// (unbind's pieces are parts of it: OutputPart).
struct Node : std::enable_shared_from_this<Node> {
  const char* op = "";
  std::vector<Edge> inputs;
  Shape output_shape;
  DType output_dtype = DType::Float32;
  std::shared_ptr<detail::HookList> hooks;  // register_hook on the Variables it computed; usually none

  // Maps d(loss)/d(output) to d(loss)/d(input) for each input, in input order; an undefined Variable
  // for an input that gets no gradient.
  virtual VariableGrads backward(const Variable& grad_output, NeedsGrad needs) const = 0;
  // Frees what backward needed: the backward function and the tensors it saved. The edges stay, so the
  // graph's shape can still be printed, and a second backward through it finds it freed and says so.
  virtual void release() = 0;
  virtual bool released() const = 0;

  virtual ~Node();
};

inline bool NeedsGrad::operator[](size_t input) const {
  return input < node_->inputs.size() && node_->inputs[input].needs_grad();
}

// ---------------------------------------------------------------------------------------------------
// Saving tensors for backward: the one capture rule
//
// Every tensor a backward function keeps is captured through a SavedTensor; nothing else is captured
// but shapes, dtypes and numbers. A SavedTensor remembers the storage's version, so backward throws
// ModifiedInPlaceError instead of returning a silently wrong gradient if the tensor was modified in
// place after the forward; and, for an input, it keeps the input's place in the graph, so that the
// gradient's own graph (create_graph) reaches it.
//
// An operand's data is kept only if a gradient needs it (as Flashlight does): for a·b, a is saved only
// if b requires grad, because only d/db = a uses it. save_if(a, b.requires_grad()) says exactly that.

// Thrown when backward finds that a tensor it saved was modified in place after it was saved.
class ModifiedInPlaceError : public Error {
  using Error::Error;
};

class ForwardObserver;  // autograd/observer.h
class SavedTensor;

namespace detail {
// This thread's ForwardObserver, or null (usually): tested once per op and per saved tensor, and defined
// with no dynamic initialization, so that the test is one load. What it hears: an op's tensors saved for
// backward, then the op recorded, or not recorded (what it saved is dropped).
extern constinit thread_local ForwardObserver* forward_observer;
void notify_saved(const SavedTensor& saved);
void notify_recorded(const std::shared_ptr<Node>& node, const Tensor& output,
                     std::span<const Variable> inputs);
void notify_not_recorded();
// While true (forward mode's tangents: autograd/forward_ad.cpp), SavedTensor::variable() and
// output_variable() give constants: a backward function's recording then reaches its upstream gradient
// alone, not the forward graph behind the op.
extern constinit thread_local bool saved_values_as_constants;
}  // namespace detail

class SavedTensor {
 public:
  SavedTensor() = default;
  // A constant (ids, targets, masks) or the op's own output.
  explicit SavedTensor(Tensor tensor)
      : tensor_(std::move(tensor)), version_(tensor_.defined() ? tensor_.version() : 0) {
    if (detail::forward_observer && tensor_.defined()) [[unlikely]]
      detail::notify_saved(*this);
  }
  // An input: its data, and, if it requires grad, its place in the graph.
  explicit SavedTensor(const Variable& input) : SavedTensor(input.data()) {
    if (input.requires_grad()) input_ = input.impl();
  }

  bool defined() const { return tensor_.defined(); }
  // The tensor; throws ModifiedInPlaceError if it was modified in place since it was saved.
  const Tensor& get() const;
  // A saved input as a Variable connected to its graph (a constant if it did not require grad).
  Variable variable() const;
  // The op's saved output as a Variable computed by `needs.node()`, so that a gradient built from it
  // depends on the op's inputs through that node (PyTorch's saved outputs do the same).
  Variable output_variable(NeedsGrad needs) const;

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
// Recording

namespace detail {

bool any_requires_grad(std::span<const Variable> inputs);
// Fills in a new node's name and edges and returns the op's output Variable, computed by that node.
Variable connect(std::shared_ptr<Node> node, const char* op, Tensor output, std::span<const Variable> inputs);
void check_forward_anomaly(const char* op, const Tensor& output, std::span<const Variable> inputs);
// Throws, naming `op`, if grad mode is on: a first-order-only backward cannot record its gradient's graph.
void check_first_order_pass(const char* op);
// A first-order-only backward's gradients as Variables.
VariableGrads first_order_only(Grads grads);

// A Node holding its op's backward function by value (one allocation per recorded op): how record()
// keeps a lambda of any type behind Node's virtual backward, which calls the lambda.
template <typename F>
struct NodeWith final : Node {
  explicit NodeWith(F f) : fn(std::move(f)) {}
  VariableGrads backward(const Variable& g, NeedsGrad needs) const override {
    if constexpr (std::is_invocable_v<const F&, const Variable&, NeedsGrad>) {
      return (*fn)(g, needs);
    } else {  // a first-order-only backward on Tensors
      check_first_order_pass(op);
      return first_order_only((*fn)(g.data(), needs));
    }
  }
  void release() override { fn.reset(); }
  bool released() const override { return !fn.has_value(); }
  std::optional<F> fn;
};

}  // namespace detail

// Wraps an op's result. If grad mode is on and an input requires grad, the result gets a Node holding
// the backward function; otherwise it is a plain leaf and the function is dropped unused. While a
// forward_ad::DualLevel is alive, the result also gets its tangent by `tangent`, the op's tangent rule
// (autograd/forward_ad.h), or, for an op that gives none, through its backward function.
template <typename F, typename T = detail::NoTangentRule>
Variable record(const char* op, Tensor output, std::span<const Variable> inputs, F backward, T tangent = {}) {
  static_assert(std::is_invocable_r_v<VariableGrads, const F&, const Variable&, NeedsGrad> ||
                    std::is_invocable_r_v<Grads, const F&, const Tensor&, NeedsGrad>,
                "a backward function is (const Variable& g, NeedsGrad) -> VariableGrads, or, first order "
                "only, (const Tensor& g, NeedsGrad) -> Grads");
  static_assert(
      std::is_same_v<T, detail::NoTangentRule> || std::is_invocable_r_v<Variable, T&, const Tangents&>,
      "a tangent rule is (const Tangents& t) -> Variable");
  if (AnomalyMode::is_enabled()) detail::check_forward_anomaly(op, output, inputs);
  if (!GradMode::is_enabled() || !detail::any_requires_grad(inputs)) {
    if (detail::forward_observer) [[unlikely]]
      detail::notify_not_recorded();  // autograd/observer.h
    if (detail::dual_level_active) [[unlikely]]
      detail::check_no_tangents(op, inputs);  // forward mode: autograd/forward_ad.h
    return Variable(std::move(output));
  }
  auto node = std::make_shared<detail::NodeWith<F>>(std::move(backward));
  Variable result = detail::connect(std::move(node), op, std::move(output), inputs);
  if (detail::dual_level_active) [[unlikely]]
    detail::add_tangent(result, inputs, std::ref(tangent));  // forward mode: autograd/forward_ad.h
  return result;
}
template <typename F, typename T = detail::NoTangentRule>
Variable record(const char* op, Tensor output, std::initializer_list<Variable> inputs, F backward,
                T tangent = {}) {
  return record(op, std::move(output), std::span<const Variable>(inputs.begin(), inputs.size()),
                std::move(backward), std::move(tangent));
}

}  // namespace minigrad

// Variable: a tensor that takes part in reverse-mode automatic differentiation.
//
// Every differentiable op (autograd/functions.h) computes its result with the tensor layer and, when
// grad mode is on and an input requires grad, records a Node: the op's name, where its inputs' gradients
// go (Edges) and a backward function written right under the forward code. backward() then walks those
// nodes from the output back to the leaves:
//
//   Variable w(Tensor::normal({3, 2}, 0, 1, DType::Float64), /*requires_grad=*/true);
//   Variable x(Tensor::ones({4, 3}, DType::Float64));
//   Variable loss = sum(relu(matmul(x, w)));
//   loss.backward();
//   std::cout << w.grad();   // d loss / d w, shape [3,2]
//
// Like a Tensor, a Variable is a handle: copies refer to the same value, gradient and graph.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
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
};

struct BackwardOptions {
  // Keep the graph (and the tensors saved for backward) so that backward can run through it again.
  bool retain_graph = false;
};

class Variable {
 public:
  Variable() = default;
  // A leaf. Only float tensors can require grad.
  explicit Variable(Tensor data, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  const Tensor& data() const;
  // Replaces a leaf's value (every handle on this Variable sees it), e.g. to change a parameter's dtype.
  // Its gradient is dropped.
  void set_data(Tensor data) const;
  // The gradient accumulated by backward() calls since the last zero_grad(); undefined before any.
  const Tensor& grad() const;
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

// Which inputs of a node want a gradient. A backward function can skip the work for the others.
class NeedsGrad {
 public:
  explicit NeedsGrad(uint64_t bits) : bits_(bits) {}
  bool operator[](size_t input) const { return input >= 64 || ((bits_ >> input) & 1); }

 private:
  uint64_t bits_;
};

using Grads = std::vector<Tensor>;

// One recorded op.
struct Node {
  // Maps d(loss)/d(output) to d(loss)/d(input) for each input, in input order; an undefined tensor for
  // an input that gets no gradient.
  using Backward = std::function<Grads(const Tensor& grad_output, NeedsGrad needs)>;

  const char* op = "";
  std::vector<Edge> inputs;
  Backward backward;  // empty once backward has run without retain_graph
  Shape output_shape;
  DType output_dtype = DType::Float32;
  uint64_t sequence = 0;  // creation order, for printing graphs

  // Bookkeeping of one backward pass.
  Tensor grad;        // the sum of the gradients received so far for this node's output
  int pending = 0;    // consumers that have not sent their gradient yet
  uint64_t pass = 0;  // the pass that last counted this node

  NeedsGrad needs() const;
  // Frees what backward needed: the backward function and the tensors it saved. The edges stay, so the
  // graph's shape can still be printed, and a second backward through it finds it freed and says so.
  void release();
  ~Node();
};

// ---------------------------------------------------------------------------------------------------
// Grad mode

// Whether ops record graph nodes on this thread. On by default.
class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Turns recording off on this thread for the guard's lifetime (evaluation, optimizer updates):
//   { NoGradGuard no_grad; auto prediction = model.forward(x); }
class NoGradGuard {
 public:
  NoGradGuard() : previous_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// ---------------------------------------------------------------------------------------------------
// Saving tensors for backward

// Thrown when backward finds that a tensor it saved was modified in place after it was saved.
class ModifiedInPlaceError : public Error {
  using Error::Error;
};

// A tensor kept for backward together with its storage's version at the time. get() refuses to return
// it if an in-place op has written to the storage since: the gradient would silently be wrong.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(Tensor tensor)
      : tensor_(std::move(tensor)), version_(tensor_.defined() ? tensor_.version() : 0) {}
  const Tensor& get() const;

 private:
  Tensor tensor_;
  uint64_t version_ = 0;
};

// ---------------------------------------------------------------------------------------------------
// Recording ops

namespace detail {
bool any_requires_grad(std::span<const Variable> inputs);
Variable make_recorded(const char* op, Tensor output, std::span<const Variable> inputs,
                       Node::Backward backward);
}  // namespace detail

// Wraps an op's result. If grad mode is on and an input requires grad, the result gets a Node holding
// `backward`; otherwise it is a plain leaf and `backward` is dropped unused.
template <typename F>
Variable record(const char* op, Tensor output, std::span<const Variable> inputs, F&& backward) {
  if (!GradMode::is_enabled() || !detail::any_requires_grad(inputs)) return Variable(std::move(output));
  return detail::make_recorded(op, std::move(output), inputs, Node::Backward(std::forward<F>(backward)));
}
template <typename F>
Variable record(const char* op, Tensor output, std::initializer_list<Variable> inputs, F&& backward) {
  return record(op, std::move(output), std::span<const Variable>(inputs.begin(), inputs.size()),
                std::forward<F>(backward));
}

// The engine behind Variable::backward: seeds `root` with `grad` and walks the graph.
void run_backward(const Variable& root, const Tensor& grad, BackwardOptions options);

}  // namespace minigrad

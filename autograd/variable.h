// Variable: a tensor that takes part in reverse-mode automatic differentiation.
//
// Every differentiable op (autograd/functions.h) computes its result with the tensor layer and, when
// grad mode is on and an input requires grad, records a Node (autograd/graph.h): the op's name, where its
// inputs' gradients go, and its backward function, written right under the forward code. backward()
// (autograd/engine.cpp) then walks those nodes from the output back to the leaves:
//
//   Variable w(Tensor::normal({3, 2}, 0, 1, DType::Float64), /*requires_grad=*/true);
//   Variable x(Tensor::ones({4, 3}, DType::Float64));
//   Variable loss = mean(relu(matmul(x, w)));
//   loss.backward();
//   std::cout << w.grad();   // d loss / d w, shape [3,2]
//
// Like a Tensor, a Variable is a handle: copies refer to the same value, gradient and graph.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "minigrad/autograd/hooks.h"
#include "minigrad/tensor/tensor.h"

namespace minigrad {

struct Node;

// Which part of its node's output a Variable is. Most ops have one output and a Variable is all of it;
// unbind's pieces are the slices at `index` along `dim` of one node's output, so that a sequence split
// into n steps is one node, and the steps' gradients fill one buffer instead of n whole-sized ones.
struct OutputPart {
  int dim = -1;  // -1: the whole output
  int64_t index = 0;
  bool whole() const { return dim < 0; }
};

// What a Variable handle points at.
struct VariableImpl {
  VariableImpl() = default;
  explicit VariableImpl(Tensor value) : data(std::move(value)) {}

  Tensor data;
  std::shared_ptr<Node> grad_fn;  // the op that produced this value; null for leaves
  OutputPart part;                // which part of grad_fn's output this value is
  bool requires_grad = false;

  // What only some Variables have: a leaf's gradient, and a name. Every op's result is a VariableImpl,
  // in the forward pass and in the backward pass, so these live apart, allocated when first set.
  struct Extras {
    // d(output)/d(this), accumulated by backward(); leaves only, and non-leaves that retain_grad(). One
    // value: its tensor may be dense or row-sparse (a sparse embedding's; tensor/row_sparse.h), and after
    // backward({.create_graph = true}) it carries the graph of its own computation.
    std::shared_ptr<VariableImpl> grad;
    std::string name;  // optional, shown in graph exports
    // A leaf's gradient hooks (a non-leaf's are on the node that computed it); whether a non-leaf keeps
    // its gradient in `grad` (autograd/hooks.h).
    std::shared_ptr<detail::HookList> hooks;
    bool retains_grad = false;
    // Forward mode's tangent, while a forward_ad::DualLevel lives (autograd/forward_ad.h).
    std::shared_ptr<VariableImpl> tangent;
  };
  std::unique_ptr<Extras> extras;
  Extras& extras_to_write() {
    if (!extras) extras = std::make_unique<Extras>();
    return *extras;
  }
};

struct BackwardOptions {
  // Keep the graph (and the tensors saved for backward) so that backward can run through it again.
  bool retain_graph = false;
  // Compute the gradients with differentiable ops, so that they are Variables with a graph of their
  // own and can be differentiated again (Hessian-vector products, gradient penalties). Implies
  // retain_graph, as in PyTorch.
  bool create_graph = false;
};

class Variable : public Methods<Variable> {  // x.sum(), x.norm(), x == y ...: tensor/methods.h
 public:
  Variable() = default;
  // A constant leaf: a Tensor converts to one wherever a Variable is taken, as in PyTorch, where the two
  // are one type (module inputs, loss targets, either side of an operator: model(x), y - t).
  Variable(Tensor data);  // NOLINT(google-explicit-constructor): the conversion is the point
  // A leaf that may require grad (only float tensors can).
  Variable(Tensor data, bool requires_grad);
  // Another handle on an existing value (what the engine and SavedTensor use).
  explicit Variable(std::shared_ptr<VariableImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const Tensor& data() const;
  // Replaces a leaf's value (every handle on this Variable sees it), e.g. to change a parameter's dtype.
  // Its gradient is dropped.
  void set_data(Tensor data) const;
  // The gradient accumulated by backward() calls since the last zero_grad(); undefined before any. For
  // an embedding with sparse = true it is row-sparse (grad().is_row_sparse(); tensor/row_sparse.h), as
  // PyTorch's is a sparse tensor: grad().to_dense() gives the dense one.
  const Tensor& grad() const;
  // The same gradient as a Variable. After backward({.create_graph = true}) it carries the graph that
  // computed it, so it can be differentiated again; otherwise it is a constant.
  Variable grad_variable() const;
  // Replaces the gradient, dense or row-sparse, of this value's shape and dtype (optimizers and tests).
  void set_grad(Tensor grad) const;
  // Forgets the gradient (set_to_none, the default, as PyTorch 2's): the next backward starts afresh. With
  // set_to_none false (PyTorch 1.13's default), a dense gradient is kept and filled with zeros in place; a
  // row-sparse one, or one with a graph (create_graph), is forgotten all the same.
  void zero_grad(bool set_to_none = true) const;

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

  // ---- the common ops as methods, as on a PyTorch tensor: x.reshape({2, -1}).sum(). Each is the function
  // of the same name in autograd/functions.h (autograd/variable_methods.cpp), differentiable as it is; the
  // reductions (sum, mean, max, min, argmax, argmin, norm, all, any), flatten, masked_fill and the
  // comparisons are Methods<Variable>'s, declared once for Tensor and Variable (tensor/methods.h) ----
  Variable reshape(const Shape& shape) const;
  Variable view(const Shape& shape) const;  // reshape: minigrad copies only where it must, as reshape does
  Variable transpose(int64_t dim0, int64_t dim1) const;
  Variable t() const;  // transpose(0, 1) of a matrix
  Variable permute(const Shape& dims) const;
  Variable unsqueeze(int64_t dim) const;
  Variable squeeze(int64_t dim) const;
  Variable expand(const Shape& shape) const;
  Variable select(int64_t dim, int64_t index) const;
  Variable slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  // The same values in another dtype, differentiable: the gradient comes back in this Variable's dtype.
  Variable to(DType dtype) const;
  Variable matmul(const Variable& other) const;
  Variable pow(double exponent) const;
  Variable exp() const;
  Variable log() const;
  Variable sqrt() const;
  Variable abs() const;
  Variable tanh() const;
  Variable sigmoid() const;
  Variable relu() const;
  Variable softmax(int64_t dim) const;
  Variable log_softmax(int64_t dim) const;
  Variable clamp(std::optional<double> min, std::optional<double> max) const;

  // Calls `hook` with this value's gradient in each backward pass; it may return a replacement
  // (autograd/hooks.h). The value must require grad.
  HookHandle register_hook(GradHook hook) const;
  // Keeps a non-leaf's gradient in grad() after backward, accumulated as a leaf's is (a leaf that
  // requires grad keeps it anyway).
  void retain_grad() const;
  bool retains_grad() const;  // true after retain_grad() on a non-leaf

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

// Prints the value as a Tensor does, and, as PyTorch does, requires_grad=True for a leaf that requires
// grad or the op that computed it:  tensor([2., 4.], shape=[2], dtype=float32, grad_fn=<mul_scalar>)
std::ostream& operator<<(std::ostream& os, const Variable& v);

}  // namespace minigrad

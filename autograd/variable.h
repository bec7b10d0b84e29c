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
#include <string>

#include "tensor/tensor.h"

namespace minigrad {

struct Node;
struct RowSparseGrad;  // autograd/sparse_grad.h

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
    Tensor grad;  // accumulated d(output)/d(this); leaves only
    // The same gradient when it is row-sparse (autograd/sparse_grad.h); `grad` is then undefined.
    std::shared_ptr<RowSparseGrad> sparse_grad;
    // The gradient with the graph of its own computation, set by backward({.create_graph = true}).
    std::shared_ptr<VariableImpl> grad_with_graph;
    std::string name;  // optional, shown in graph exports
    // This Variable's own value is row-sparse, and `data` is undefined: a gradient on its way from a sparse
    // embedding's backward to the engine (Variable::row_sparse).
    std::shared_ptr<const RowSparseGrad> row_sparse_value;

    // Turns a row-sparse gradient into the dense `grad` (one table-sized buffer).
    void make_grad_dense();
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
  // A row-sparse gradient (has_sparse_grad()) is turned into a dense one first, and stays dense: that
  // costs one buffer of the parameter's size, which is what the row-sparse gradient saves.
  const Tensor& grad() const;
  // Whether the gradient is row-sparse (an embedding with sparse = true; autograd/sparse_grad.h), and the
  // rows present. sparse_grad() throws unless has_sparse_grad().
  bool has_sparse_grad() const;
  const RowSparseGrad& sparse_grad() const;
  // Replaces the gradient by a row-sparse one of this value's shape and dtype (optimizers, tests).
  void set_sparse_grad(RowSparseGrad grad) const;
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

  // A Variable whose value is row-sparse (data() is undefined): what a sparse embedding's backward returns
  // for its table, and only the engine reads (autograd/sparse_grad.h).
  static Variable row_sparse(RowSparseGrad value);
  bool is_row_sparse() const { return impl_ && impl_->extras && impl_->extras->row_sparse_value; }
  const RowSparseGrad& row_sparse_value() const;

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

#include "minigrad/autograd/variable.h"

#include <ostream>
#include <sstream>

#include "minigrad/autograd/engine.h"

namespace minigrad {

Variable::Variable(Tensor data) : Variable(std::move(data), false) {}

Variable::Variable(Tensor data, bool requires_grad) {
  if (!data.defined()) throw ValueError("Variable", "cannot wrap an undefined tensor");
  impl_ = std::make_shared<VariableImpl>(std::move(data));
  if (requires_grad) set_requires_grad(true);
}

void Variable::check_defined(std::string_view op) const {
  if (!impl_) throw ValueError(op, "the Variable is undefined (default-constructed)");
}

const Tensor& Variable::data() const {
  check_defined("data");
  return impl_->data;
}

void Variable::set_data(Tensor data) const {
  check_defined("set_data");
  if (!is_leaf()) throw ValueError("set_data", "only a leaf's value can be replaced");
  if (!data.defined()) throw ValueError("set_data", "cannot set an undefined tensor");
  if (impl_->requires_grad && !is_floating(data.dtype())) {
    throw DTypeError(
        "set_data", "a value that requires grad must be float, got " + std::string(dtype_name(data.dtype())));
  }
  impl_->data = std::move(data);
  zero_grad();  // the gradient goes; the name stays
}

const Tensor& Variable::grad() const {
  check_defined("grad");
  static const Tensor none;
  return impl_->extras && impl_->extras->grad ? impl_->extras->grad->data : none;
}

Variable Variable::grad_variable() const {
  check_defined("grad_variable");
  return impl_->extras && impl_->extras->grad ? Variable(impl_->extras->grad) : Variable();
}

void Variable::set_grad(Tensor grad) const {
  check_defined("set_grad");
  if (grad.defined() && (grad.shape() != shape() || grad.dtype() != dtype())) {
    throw ShapeError("set_grad", "a gradient " + describe(grad.shape(), grad.dtype()) + " for a value " +
                                     describe(shape(), dtype()));
  }
  impl_->extras_to_write().grad = grad.defined() ? std::make_shared<VariableImpl>(std::move(grad)) : nullptr;
}

void Variable::zero_grad(bool set_to_none) const {
  check_defined("zero_grad");
  if (!impl_->extras || !impl_->extras->grad) return;
  const std::shared_ptr<VariableImpl>& grad = impl_->extras->grad;
  if (!set_to_none && !grad->grad_fn && !grad->data.is_row_sparse()) {
    grad->data.zero_();  // the buffer stays, for the next backward to add into
  } else {
    impl_->extras->grad = nullptr;  // dropped, not zeroed: free whatever the size
  }
}

bool Variable::requires_grad() const {
  check_defined("requires_grad");
  return impl_->requires_grad;
}

const Variable& Variable::set_requires_grad(bool requires_grad) const {
  check_defined("set_requires_grad");
  if (!is_leaf()) {
    throw ValueError("set_requires_grad", "only leaves can be marked; this value was computed by " +
                                              std::string(impl_->grad_fn->op) + " (use detach() first)");
  }
  if (requires_grad && !is_floating(dtype())) {
    throw DTypeError("set_requires_grad",
                     "only float tensors can require grad, got " + std::string(dtype_name(dtype())));
  }
  impl_->requires_grad = requires_grad;
  return *this;
}

bool Variable::is_leaf() const {
  check_defined("is_leaf");
  return impl_->grad_fn == nullptr;
}

const std::shared_ptr<Node>& Variable::grad_fn() const {
  check_defined("grad_fn");
  return impl_->grad_fn;
}

const std::string& Variable::name() const {
  check_defined("name");
  static const std::string none;
  return impl_->extras ? impl_->extras->name : none;
}

const Variable& Variable::set_name(std::string name) const {
  check_defined("set_name");
  impl_->extras_to_write().name = std::move(name);
  return *this;
}

Variable Variable::detach() const {
  return Variable(data());
}

void Variable::backward(BackwardOptions options) const {
  run_backward(*this, Tensor(), options);
}

void Variable::backward(const Tensor& grad, BackwardOptions options) const {
  if (!grad.defined()) throw ValueError("backward", "the upstream gradient is undefined");
  run_backward(*this, grad, options);
}

std::ostream& operator<<(std::ostream& os, const Variable& v) {
  if (!v.defined()) return os << "Variable(undefined)";
  std::ostringstream tensor;
  tensor << v.data();
  std::string text = tensor.str();  // "tensor(..., dtype=float32)"
  if (!v.is_leaf()) {
    text.insert(text.size() - 1, std::string(", grad_fn=<") + v.grad_fn()->op + ">");
  } else if (v.requires_grad()) {
    text.insert(text.size() - 1, ", requires_grad=True");
  }
  return os << text;
}

}  // namespace minigrad

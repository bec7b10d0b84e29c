#include "autograd/variable.h"

namespace minigrad {

// ---------------------------------------------------------------------------------------------------
// Variable

Variable::Variable(Tensor data, bool requires_grad) : impl_(std::make_shared<VariableImpl>()) {
  if (!data.defined()) throw ValueError("Variable", "cannot wrap an undefined tensor");
  impl_->data = std::move(data);
  set_requires_grad(requires_grad);
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
  impl_->grad = Tensor();
  impl_->grad_with_graph = nullptr;
}

const Tensor& Variable::grad() const {
  check_defined("grad");
  return impl_->grad;
}

void Variable::set_grad(Tensor grad) const {
  check_defined("set_grad");
  if (grad.defined() && (grad.shape() != shape() || grad.dtype() != dtype())) {
    throw ShapeError("set_grad", "a gradient " + describe(grad.shape(), grad.dtype()) + " for a value " +
                                     describe(shape(), dtype()));
  }
  impl_->grad = std::move(grad);
  impl_->grad_with_graph = nullptr;
}

void Variable::zero_grad() const {
  check_defined("zero_grad");
  impl_->grad = Tensor();
  impl_->grad_with_graph = nullptr;
}

Variable Variable::grad_variable() const {
  check_defined("grad_variable");
  if (impl_->grad_with_graph) return Variable(impl_->grad_with_graph);
  return impl_->grad.defined() ? Variable(impl_->grad) : Variable();
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
  return impl_->name;
}

const Variable& Variable::set_name(std::string name) const {
  check_defined("set_name");
  impl_->name = std::move(name);
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

// ---------------------------------------------------------------------------------------------------
// Node

bool NeedsGrad::operator[](size_t input) const {
  return input < node_->inputs.size() && node_->inputs[input].needs_grad();
}

Node::~Node() {
  // Destroying a graph node by node would recurse: this node's destructor drops its inputs' nodes,
  // whose destructors drop theirs, and a chain of 100,000 ops overflows the stack. Instead, take over
  // every input node that nobody else holds and destroy them here one at a time, each with its own
  // inputs already taken away.
  std::vector<std::shared_ptr<Node>> orphans;
  auto adopt = [&orphans](std::vector<Edge>& edges) {
    for (Edge& edge : edges) {
      if (edge.node && edge.node.use_count() == 1) orphans.push_back(std::move(edge.node));
    }
    edges.clear();
  };
  adopt(inputs);
  while (!orphans.empty()) {
    std::shared_ptr<Node> node = std::move(orphans.back());
    orphans.pop_back();
    adopt(node->inputs);
  }  // `node` is destroyed here, with no inputs left to recurse into
}

// ---------------------------------------------------------------------------------------------------
// Grad mode

namespace {
thread_local bool grad_enabled = true;
}

bool GradMode::is_enabled() {
  return grad_enabled;
}
void GradMode::set_enabled(bool enabled) {
  grad_enabled = enabled;
}

namespace {
thread_local bool anomaly_enabled = false;
}

bool AnomalyMode::is_enabled() {
  return anomaly_enabled;
}
void AnomalyMode::set_enabled(bool enabled) {
  anomaly_enabled = enabled;
}

// ---------------------------------------------------------------------------------------------------
// Saved tensors

const Tensor& SavedTensor::get() const {
  if (tensor_.defined() && tensor_.version() != version_) {
    throw ModifiedInPlaceError(
        "backward", "a tensor of shape " + tensor_.shape().str() +
                        " saved for the gradient was modified in place after it was saved (version " +
                        std::to_string(version_) + ", now " + std::to_string(tensor_.version()) +
                        "); modify a clone() instead, or do the in-place update before the forward pass");
  }
  return tensor_;
}

Variable SavedTensor::variable() const {
  const Tensor& t = get();
  if (input_) return Variable(input_);
  return t.defined() ? Variable(t) : Variable();
}

Variable SavedTensor::output_variable(NeedsGrad needs) const {
  // The output of the node being differentiated: a Variable whose grad_fn is that node, so that the
  // gradient's graph runs through it again. (Saving the output Variable itself would make a cycle:
  // node -> saved output -> grad_fn = node.)
  Variable y(get());
  y.impl()->requires_grad = true;
  y.impl()->grad_fn = std::const_pointer_cast<Node>(needs.node().shared_from_this());
  return y;
}

// ---------------------------------------------------------------------------------------------------
// Recording

namespace detail {

bool any_requires_grad(std::span<const Variable> inputs) {
  for (const Variable& v : inputs) {
    if (!v.defined()) throw ValueError("record", "an input Variable is undefined");
    if (v.requires_grad()) return true;
  }
  return false;
}

Variable connect(std::shared_ptr<Node> node, const char* op, Tensor output,
                 std::span<const Variable> inputs) {
  node->op = op;
  node->output_shape = output.shape();
  node->output_dtype = output.dtype();
  node->inputs.reserve(inputs.size());
  for (const Variable& v : inputs) {
    const std::shared_ptr<VariableImpl>& impl = v.impl();
    Edge edge{nullptr, nullptr, impl->data.shape(), impl->data.dtype()};
    if (impl->requires_grad) {
      if (impl->grad_fn) {
        edge.node = impl->grad_fn;
      } else {
        edge.leaf = impl;
      }
    }
    node->inputs.push_back(std::move(edge));
  }
  Variable result(std::move(output));
  result.impl()->requires_grad = true;
  result.impl()->grad_fn = std::move(node);
  return result;
}

void throw_no_differentiable_backward(const char* op) {
  throw Error(std::string("backward of ") + op,
              "this op has only a first-order backward, so its gradient cannot be differentiated again "
              "(create_graph); give record() a Backward{first_order, differentiable} pair");
}

}  // namespace detail

}  // namespace minigrad

#include "minigrad/autograd/graph.h"

namespace minigrad {

// ---------------------------------------------------------------------------------------------------
// Node

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

namespace detail {
constinit thread_local bool saved_values_as_constants = false;
}  // namespace detail

Variable SavedTensor::variable() const {
  const Tensor& t = get();
  if (input_ && !detail::saved_values_as_constants) return Variable(input_);
  return t.defined() ? Variable(t) : Variable();
}

Variable SavedTensor::output_variable(NeedsGrad needs) const {
  // With grad mode off nothing records, and the value is all a backward function needs.
  if (!GradMode::is_enabled() || detail::saved_values_as_constants) return Variable(get());
  // The output of the node being differentiated: a Variable whose grad_fn is that node, so that the
  // gradient's graph runs through it again. (Saving the output Variable itself would make a cycle:
  // node -> saved output -> grad_fn = node.)
  Variable y(get());
  y.impl()->requires_grad = true;
  y.impl()->grad_fn = std::const_pointer_cast<Node>(needs.node().shared_from_this());
  if (detail::dual_level_active) [[unlikely]]
    detail::add_output_tangent(y, needs.node());  // forward mode: autograd/forward_ad.h
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
    Edge edge;
    edge.shape = impl->data.shape();
    edge.dtype = impl->data.dtype();
    if (impl->requires_grad) {
      if (impl->grad_fn) {
        edge.node = impl->grad_fn;
        edge.part = impl->part;
      } else {
        edge.leaf = impl;
      }
    }
    node->inputs.push_back(std::move(edge));
  }
  if (forward_observer) [[unlikely]]
    notify_recorded(node, output, inputs);  // its values, for the backward page: autograd/observer.h
  Variable result(std::move(output));
  result.impl()->requires_grad = true;
  result.impl()->grad_fn = std::move(node);
  return result;
}

void check_first_order_pass(const char* op) {
  if (GradMode::is_enabled()) {
    throw Error(std::string("backward of ") + op,
                "this op has only a first-order backward (a function of Tensors), so its gradient cannot be "
                "differentiated again (create_graph); write its backward on Variables");
  }
}

VariableGrads first_order_only(Grads grads) {
  VariableGrads result(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) result[i] = Variable(std::move(grads[i]));
  }
  return result;
}

}  // namespace detail

}  // namespace minigrad

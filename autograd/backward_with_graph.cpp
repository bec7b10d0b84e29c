// backward({.create_graph = true}): gradients that can be differentiated again.
//
// Every backward function is written with differentiable ops on Variables. The first-order pass
// (autograd/engine.cpp) runs them with grad mode off, so they only compute; this one runs the same walk
// with grad mode on, so each gradient gets a graph of its own, and each leaf keeps its gradient as that
// Variable (Variable::grad_variable() gives it back, with its graph).
#include "minigrad/autograd/engine.h"
#include "minigrad/autograd/functions.h"

namespace minigrad::detail {

namespace {

// The leaf's gradient becomes the sum, recorded: a Variable with a graph.
void accumulate_into_leaf_with_graph(VariableImpl& leaf, Variable g) {
  std::shared_ptr<VariableImpl>& grad = leaf.extras_to_write().grad;
  Variable total = grad ? add(Variable(grad), g) : std::move(g);
  // A gradient with no graph (it depends on no input) is kept as the first-order pass keeps it: a copy
  // of its own, since a later first-order pass adds into it in place.
  if (total.is_leaf()) total = Variable(total.data().clone());
  grad = total.impl();
}

}  // namespace

void run_backward_with_graph(const Variable& root, const Tensor& seed) {
  GradModeGuard grad_mode(true);  // the backward functions record their ops
  VariableImpl& value = *root.impl();
  if (!value.grad_fn) return accumulate_into_leaf_with_graph(value, after_leaf_hooks(value, Variable(seed)));
  backpropagate({value.grad_fn.get()}, {whole_output_gradient(value, Variable(seed))}, /*retain_graph=*/true,
                {.leaf = accumulate_into_leaf_with_graph});
}

}  // namespace minigrad::detail

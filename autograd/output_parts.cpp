// The pieces of unbind's output (OutputPart, autograd/variable.h), as the engine meets them.
//
// unbind(x, dim) records one node whose n outputs are the slices of x; a sequence model that walks its
// steps one by one consumes them separately. Each consumer sends a gradient for its piece only, and the
// node's backward wants the gradient of its whole output. These two functions turn the one into the
// other, so that n steps cost one whole-sized buffer instead of n of them.
#include "minigrad/autograd/engine.h"
#include "minigrad/autograd/functions.h"

namespace minigrad::detail {

Variable whole_output_gradient(const VariableImpl& value, Variable g) {
  if (value.part.whole()) return g;
  return select_backward(g, value.grad_fn->output_shape, value.part.dim, value.part.index);
}

// Recording (create_graph), the part is placed in zeros and added out of place. Otherwise it is added in
// place into a buffer of the whole output, allocated by the first part to arrive, and written in place
// only while no one else holds it: a first gradient that arrived whole may be another handle's tensor.
void add_part_into(Variable& waiting, const Node& node, OutputPart part, const Variable& g) {
  if (GradMode::is_enabled())
    return add_into(waiting, select_backward(g, node.output_shape, part.dim, part.index));
  const bool ours = waiting.defined() && waiting.impl().use_count() == 1 && waiting.data().owns_its_buffer();
  if (!ours) {
    waiting = Variable(waiting.defined() ? waiting.data().clone()
                                         : Tensor::zeros(node.output_shape, node.output_dtype));
  }
  waiting.data().select(part.dim, part.index).add_(g.data());
}

}  // namespace minigrad::detail

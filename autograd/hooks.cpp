// register_hook and retain_grad (autograd/hooks.h): where the hooks are kept and how the engine runs them.
//
// A non-leaf's hooks are kept on the node that computed it, with the part of the node's output the
// Variable is, and run on the gradient waiting at that node before its backward function
// (autograd/engine.cpp, step 2). A leaf's are kept on the leaf; the engine sums the leaf's gradients of
// the pass first, then runs them once, then adds the result into .grad.
#include <algorithm>
#include <string>
#include <vector>

#include "minigrad/autograd/engine.h"
#include "minigrad/autograd/functions.h"
#include "minigrad/tensor/elementwise.h"

namespace minigrad {

void HookHandle::remove() {
  const std::shared_ptr<void> list = list_.lock();
  if (list) erase_(list.get(), id_);
  list_.reset();
}

namespace {

// The hook list a Variable's hooks go into (on the leaf, or on the node that computed it), made on first use.
const std::shared_ptr<detail::HookList>& hook_list(const Variable& v) {
  std::shared_ptr<detail::HookList>& list =
      v.is_leaf() ? v.impl()->extras_to_write().hooks : v.grad_fn()->hooks;
  if (!list) list = std::make_shared<detail::HookList>();
  return list;
}

HookHandle add_hook(const Variable& v, GradHook fn, bool runs_last) {
  const std::shared_ptr<detail::HookList>& list = hook_list(v);
  const uint64_t id = list->next_id++;
  list->hooks.push_back({.id = id, .part = v.impl()->part, .fn = std::move(fn), .runs_last = runs_last});
  return HookHandle(list, id, [](void* owner, uint64_t hook_id) {
    std::erase_if(static_cast<detail::HookList*>(owner)->hooks,
                  [hook_id](const detail::Hook& h) { return h.id == hook_id; });
  });
}

// Adds a non-leaf's gradient into its .grad, as a leaf's is added: in place after the first, which is
// copied (the gradient flows on to other ops); with a graph of its own under create_graph.
void keep_gradient(VariableImpl& value, const Variable& g) {
  std::shared_ptr<VariableImpl>& grad = value.extras_to_write().grad;
  if (GradMode::is_enabled()) {
    grad = (grad ? add(Variable(grad), g) : g).impl();
  } else if (!grad || grad->grad_fn) {
    grad = std::make_shared<VariableImpl>(grad ? add(grad->data, g.data()) : g.data().clone());
  } else {
    accumulate(grad->data, g.data());
  }
}

// Calls the hooks for one value, in order, retain_grad's last: each sees the previous one's result.
Variable run_hooks(const detail::HookList& list, const OutputPart& part, Variable g, const Shape& shape,
                   DType dtype) {
  // A copy of the list: a hook may remove itself, or register another, while it runs.
  const std::vector<detail::Hook> hooks = list.hooks;
  for (const bool last : {false, true}) {
    for (const detail::Hook& hook : hooks) {
      if (hook.runs_last != last || hook.part.dim != part.dim || hook.part.index != part.index) continue;
      Variable replacement = hook.fn(g);
      if (!replacement.defined()) continue;
      if (replacement.shape() != shape || replacement.dtype() != dtype) {
        throw ShapeError("register_hook",
                         "the hook returned a gradient of shape " + replacement.shape().str() + " " +
                             std::string(dtype_name(replacement.dtype())) + " for a value of shape " +
                             shape.str() + " " + std::string(dtype_name(dtype)));
      }
      g = std::move(replacement);
    }
  }
  return g;
}

}  // namespace

HookHandle Variable::register_hook(GradHook hook) const {
  check_defined("register_hook");
  if (!requires_grad()) {
    throw ValueError("register_hook", "the value does not require grad, so no gradient will pass through it");
  }
  if (!hook) throw ValueError("register_hook", "the hook is empty");
  return add_hook(*this, std::move(hook), /*runs_last=*/false);
}

void Variable::retain_grad() const {
  check_defined("retain_grad");
  if (!requires_grad()) {
    throw ValueError("retain_grad", "the value does not require grad, so it will have no gradient to keep");
  }
  if (is_leaf() || retains_grad()) return;  // a leaf keeps its gradient anyway
  impl_->extras_to_write().retains_grad = true;
  // The node's hook refers to the value without owning it (the value owns the node).
  add_hook(
      *this,
      [value = std::weak_ptr<VariableImpl>(impl_)](const Variable& g) {
        if (const std::shared_ptr<VariableImpl> v = value.lock()) keep_gradient(*v, g);
        return Variable();
      },
      /*runs_last=*/true);
}

bool Variable::retains_grad() const {
  check_defined("retains_grad");
  return impl_->extras && impl_->extras->retains_grad;
}

namespace detail {

Variable run_output_hooks(const Node& node, Variable total) {
  // The hooks of each part of the output that has some: the whole, or a piece of unbind's output, whose
  // replacement goes back into its place in the whole.
  std::vector<OutputPart> parts;
  for (const Hook& hook : node.hooks->hooks) {
    const bool seen = std::any_of(parts.begin(), parts.end(), [&](const OutputPart& p) {
      return p.dim == hook.part.dim && p.index == hook.part.index;
    });
    if (!seen) parts.push_back(hook.part);
  }
  for (const OutputPart& part : parts) {
    if (part.whole()) {
      total = run_hooks(*node.hooks, part, std::move(total), node.output_shape, node.output_dtype);
      continue;
    }
    std::vector<Variable> pieces = unbind(total, part.dim);
    Variable& piece = pieces[static_cast<size_t>(part.index)];
    const Variable after = run_hooks(*node.hooks, part, piece, piece.shape(), piece.dtype());
    if (!after.is_same(piece)) {
      piece = after;
      total = stack(pieces, part.dim);
    }
  }
  return total;
}

void add_leaf_gradient(HookedLeaves& leaves, VariableImpl* leaf, Variable g) {
  for (auto& [seen, total] : leaves) {
    if (seen == leaf) return add_into(total, std::move(g));
  }
  leaves.emplace_back(leaf, std::move(g));
}

Variable after_leaf_hooks(const VariableImpl& leaf, Variable total) {
  if (!has_hooks(leaf)) return total;
  return run_hooks(*leaf.extras->hooks, OutputPart{}, std::move(total), leaf.data.shape(), leaf.data.dtype());
}

}  // namespace detail

}  // namespace minigrad

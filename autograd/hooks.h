// Looking at gradients as backward() computes them, and changing them: PyTorch's register_hook and
// retain_grad on a Variable (autograd/hooks.cpp).
//
//   Variable h = relu(matmul(x, w));
//   h.retain_grad();                      // keep d loss / d h: h.grad() after backward
//   HookHandle halve = h.register_hook([](const Variable& g) { return mul(g, 0.5); });
//   loss.backward();                      // h's gradient is halved before it flows on to w
//   halve.remove();                       // the next backward leaves it alone
//
// A hook is called once per backward pass with the Variable's whole gradient in that pass (for a leaf
// used twice, the sum of both uses), before the gradient flows on (a non-leaf's, into the op that
// computed it) or is added into .grad (a leaf's). It returns a replacement of the same shape and dtype,
// or an undefined Variable to let the gradient pass unchanged. Hooks run in the order they were
// registered; retain_grad's keeping runs after them, so .grad holds what flowed on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace minigrad {

class Variable;

using GradHook = std::function<Variable(const Variable& grad)>;

namespace detail {
struct HookList;  // autograd/graph.h
}  // namespace detail

// What register_hook returns (and nn::Module's register_forward_hook and register_full_backward_hook):
// remove() takes the hook off. Removing twice, or after the Variable or module is gone, does nothing.
class HookHandle {
 public:
  // Takes the hook `id` off `list`, the list it was registered on.
  using Erase = void (*)(void* list, uint64_t id);
  HookHandle() = default;
  HookHandle(std::weak_ptr<void> list, uint64_t id, Erase erase)
      : list_(std::move(list)), id_(id), erase_(erase) {}
  void remove();

 private:
  std::weak_ptr<void> list_;
  uint64_t id_ = 0;
  Erase erase_ = nullptr;
};

}  // namespace minigrad

#include "minigrad/autograd/observer.h"

namespace minigrad {

namespace {
constinit thread_local BackwardObserver* current = nullptr;  // this thread's backward observer
}  // namespace

ObserveBackward::ObserveBackward(BackwardObserver& observer) : previous_(current) {
  current = &observer;
}

ObserveBackward::~ObserveBackward() {
  current = previous_;
}

BackwardObserver* detail::backward_observer() {
  return current;
}

// The forward observer's pointer is graph.h's, tested inline on every recorded op and saved tensor.
constinit thread_local ForwardObserver* detail::forward_observer = nullptr;

ObserveForward::ObserveForward(ForwardObserver& observer) : previous_(detail::forward_observer) {
  detail::forward_observer = &observer;
}

ObserveForward::~ObserveForward() {
  detail::forward_observer = previous_;
}

namespace detail {

void notify_saved(const SavedTensor& saved) {
  forward_observer->on_saved(saved.get());
}

void notify_recorded(const std::shared_ptr<Node>& node, const Tensor& output,
                     std::span<const Variable> inputs) {
  forward_observer->on_recorded(node, output, inputs);
}

void notify_not_recorded() {
  forward_observer->on_not_recorded();
}

}  // namespace detail

}  // namespace minigrad

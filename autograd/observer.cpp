#include "minigrad/autograd/observer.h"

namespace minigrad {

namespace {
constinit thread_local BackwardObserver* current = nullptr;
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

}  // namespace minigrad

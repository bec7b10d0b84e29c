#include "minigrad/nn/module_list.h"

namespace minigrad::nn {

void ModuleList::throw_not_found(size_t i) const {
  if (i >= size()) {
    throw ValueError("ModuleList",
                     "has no module " + std::to_string(i) + ": it holds " + std::to_string(size()));
  }
  throw ValueError("ModuleList", "module " + std::to_string(i) + " is a " + children()[i].second->name() +
                                     ", not the type asked for");
}

Variable Sequential::forward(const Variable& x) const {
  Variable y = x;
  for (const auto& step : steps_) y = step(y);
  return y;
}

}  // namespace minigrad::nn

#include "minigrad/nn/module_list.h"

namespace minigrad::nn {

Variable Sequential::forward(const Variable& input) const {
  ModuleCall call(*this, {input});
  const Variable& x = call.input(0);
  Variable y = x;
  for (const auto& step : steps_) y = step(y);
  return call.output(y);
}

}  // namespace minigrad::nn

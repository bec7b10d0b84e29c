#include "minigrad/nn/module_list.h"

namespace minigrad::nn {

Variable Sequential::forward(const Variable& x) const {
  Variable y = x;
  for (const auto& step : steps_) y = step(y);
  return y;
}

}  // namespace minigrad::nn

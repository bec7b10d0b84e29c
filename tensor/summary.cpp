#include "minigrad/tensor/summary.h"

#include <algorithm>

#include "minigrad/tensor/reduce.h"

namespace minigrad {

TensorSummary summarize(const Tensor& t, int64_t max_complete, int64_t first) {
  // Ids and masks are summarised as numbers too; the reductions take floating point.
  const Tensor dense = t.to_dense();
  const Tensor x = is_floating(dense.dtype()) ? dense : dense.to(DType::Float64);
  TensorSummary s;
  s.shape = dense.shape();
  s.dtype = dense.dtype();
  const int64_t n = x.numel();
  if (n > 0) {  // mean, min and max propagate a NaN, as PyTorch's
    s.mean = mean(x).item();
    s.min = min(x).item();
    s.max = max(x).item();
  }
  s.complete = n <= max_complete;
  const Tensor flat = x.flatten();
  s.values = (s.complete ? flat : flat.slice(0, 0, std::min(first, n))).to_vector<double>();
  return s;
}

}  // namespace minigrad
